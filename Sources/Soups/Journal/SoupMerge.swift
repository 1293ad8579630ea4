import JSON

/// Entries holding what the org just sent, each stored over the soup's entry that holds the same
/// value at `keyPath` — looked up through that index by the writer, in the write's own transaction,
/// so nothing is read before the write and each lookup sees every entry written before it, an
/// earlier one of the same merge included. A clean entry that would store nothing new
/// (``JSONObject/storesSameSync(as:)``) is left as it is; the data fields of every entry written
/// are recorded as what the org confirmed.
///
/// `keyPath` must be indexed with a column (not `json1`). Of several entries holding one value,
/// the oldest is the one stored over.
public struct SoupMerge: Sendable {
    public var soup: String
    public var keyPath: String
    /// The entries to store, without `_soupEntryId`.
    public var entries: [JSONObject]
    /// Records as the org sent them, stored after `entries` as the entries they make: prepared
    /// from their bytes (a sync down's page).
    public var records: SyncedRecords?

    public init(soup: String, keyPath: String, entries: [JSONObject], records: SyncedRecords? = nil) {
        self.soup = soup
        self.keyPath = keyPath
        self.entries = entries
        self.records = records
    }

    /// What a merge did to the soup.
    public struct Counts: Sendable, Equatable {
        /// Entries that matched none and were added.
        public var created = 0
        /// Entries written over the one they matched.
        public var updated = 0
        /// Entries that matched one holding the same (nothing written).
        public var unchanged = 0

        public init(created: Int = 0, updated: Int = 0, unchanged: Int = 0) {
            self.created = created
            self.updated = updated
            self.unchanged = unchanged
        }
    }
}

/// What applying a change set did beyond writing it (``SoupStore/apply(_:)``).
public struct AppliedChanges: Sendable {
    /// The counts of each of ``SoupChangeSet/merges``, in order.
    public var merges: [SoupMerge.Counts] = []

    public init(merges: [SoupMerge.Counts] = []) {
        self.merges = merges
    }
}

extension JSONObject {
    /// Whether storing `entry` over this stored entry would store nothing new for a sync: this
    /// entry is clean, last written by `entry`'s sync (`__sync_id__`), and holds the same data
    /// fields (``dataFields``).
    public func storesSameSync(as entry: JSONObject) -> Bool {
        !isDirty && self[SyncField.syncId] == entry[SyncField.syncId] && dataFields == entry.dataFields
    }
}
