import JSON

/// What a page's sync knows of its records as it goes, by record: how each was read, the
/// operation planned and the fields sent for it, its outcome once decided, the entries to
/// remove, and the sender's results (journal ids, dates read back, writes an earlier attempt
/// may have applied). Handed whole to what applies, saves and reports the page.
struct SyncUpPageLedger {
    /// The records as read: their ids before the org gave any, and the entries the save replaces.
    let asRead: [RecordKey: SyncUpRecord]
    /// The operation planned for each record (none for a record discarded or never sent).
    var kinds: [RecordKey: SyncUpOperation.Kind] = [:]
    /// The fields sent for each record.
    var sent: [RecordKey: JSONObject] = [:]
    /// Each record's outcome, once decided.
    var final: [RecordKey: SyncUpOutcome] = [:]
    /// Entries the page removes (deleted, or their tree replaced).
    var removed = Set<RecordKey>()
    var results = SyncUpSender.Results()

    init(_ trees: [SyncUpTree]) {
        var asRead: [RecordKey: SyncUpRecord] = [:]
        for (index, tree) in trees.enumerated() {
            for (child, record) in tree.positionedRecords {
                let key = RecordKey(tree: index, child: child)
                asRead[key] = record
                // An earlier run gave up on it after a lost answer: the org may have applied it.
                if record.lastErrorCode == SyncUpError.answerLost { results.mayHaveBeenApplied.insert(key) }
            }
        }
        self.asRead = asRead
    }

    /// The dates read back by the requests that wrote them, but for trees written again since
    /// (a date read back by an earlier request may be stale).
    func freshReadBack(except writtenAgain: Set<Int>) -> [RecordKey: JSONObject] {
        writtenAgain.isEmpty ? results.readBack : results.readBack.filter { !writtenAgain.contains($0.key.tree) }
    }

    /// The ledger with only the outcomes of trees `keeping` accepts (the rest is not saved).
    func keepingTrees(_ keeping: (Int) -> Bool) -> SyncUpPageLedger {
        var kept = self
        kept.final = final.filter { keeping($0.key.tree) }
        return kept
    }
}
