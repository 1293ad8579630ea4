import Foundation
import JSON
import Soups

/// `stage`: writes a dataset into a soup. Records are matched to entries on `matchOn`; fields
/// present in a record replace the entry's values and the others are kept. Unmatched records become
/// new entries — with their server `Id`, or a `local_` id — and clean sync flags (`markDirty` sets
/// them). With `markDirty: true` each entry a record lands on is flagged in the same write, as the
/// `markDirty` stage's `as: auto` would flag it (no second pass over the soup). With `mergeMode`
/// LEAVE_IF_CHANGED a dirty entry is never touched (counted as a conflict).
/// `children` stores nested child records in their own soup, linked by `parentIdField`; `parent`
/// (one link or a list) links each record to parent entries by keys — polymorphic links name
/// several soups, a link into the stage's own soup is resolved after the whole input. A link
/// carries the parent's server id, or its `local_` id until it has one; a record whose parent
/// cannot be found is rejected.
public struct SoupStagingStage: Stage {
    public static let typeName = "stage"
    public static let countKeys = [StageCounts.read, StageCounts.created, StageCounts.updated, StageCounts.unchanged,
                                   StageCounts.conflicts, StageCounts.rejected]

    /// How nested child records are stored.
    struct Children: Sendable {
        var relationship: String
        var soup: String
        var parentIdField: String
        var matchOn: String
    }

    /// How records find a parent entry: in the first of `soups` with an entry whose `matchOn`
    /// equals the record's `key` (several soups: a polymorphic lookup; lists of paths: a
    /// composite key). A link into the stage's own soup (a self-lookup) is resolved once the whole
    /// input is staged, so a parent later in the input is found. Without `required`, a record
    /// with no key value simply has no link.
    struct Parent: Sendable {
        var soups: [String]
        var key: MatchKey
        var matchOn: MatchKey
        var idField: String
        var required = true
    }

    let soup: String
    let matchOn: MatchKey
    let leaveIfChanged: Bool
    /// Flags each entry a record lands on as `markDirty` `as: auto` would, in the same write.
    let markDirty: Bool
    let sobjectType: String?
    let children: Children?
    /// Parent links resolved as each batch is staged.
    let parents: [Parent]
    /// Self-lookups, resolved after the whole input.
    let selfLinks: [Parent]

    public init(settings: StageSettings) throws {
        soup = settings.soup("soup") ?? ""
        matchOn = MatchKey(settings: settings)
        leaveIfChanged = settings.choice("mergeMode", of: ["OVERWRITE", "LEAVE_IF_CHANGED"], default: "OVERWRITE") == "LEAVE_IF_CHANGED"
        markDirty = settings.bool("markDirty", default: false)
        sobjectType = settings.string("sobjectType")
        let knownSoups = settings.soups
        func checkIndexed(_ soupName: String, _ path: String, _ key: String) {
            guard let spec = knownSoups.first(where: { $0.name == soupName }) else { return }
            if path != SyncField.soupEntryId && spec.index(forPath: path) == nil {
                settings.report(key, "soup \"\(soupName)\" has no index on \"\(path)\"; matching needs an indexed path (indexed: \(spec.indexes.map(\.path).joined(separator: ", ")))")
            }
        }
        for path in matchOn.paths { checkIndexed(soup, path, "matchOn") }
        if let object = settings.object("children") {
            let relationship = object["relationship"]?.stringValue
            let soupName = object["soup"]?.stringValue
            let parentIdField = object["parentIdField"]?.stringValue
            for key in object.keys where !["relationship", "soup", "parentIdField", "matchOn"].contains(key) {
                settings.report("children.\(key)", "unknown key; expected relationship, soup, parentIdField, matchOn")
            }
            if relationship == nil || soupName == nil || parentIdField == nil {
                settings.report("children", "needs relationship, soup and parentIdField")
            }
            if let soupName, !knownSoups.contains(where: { $0.name == soupName }) {
                settings.report("children.soup", "no soup named \"\(soupName)\"; known soups: \(knownSoups.map(\.name).sorted().joined(separator: ", "))")
            }
            let childMatch = object["matchOn"]?.stringValue ?? "Id"
            if let soupName { checkIndexed(soupName, childMatch, "children.matchOn") }
            children = Children(relationship: relationship ?? "", soup: soupName ?? "", parentIdField: parentIdField ?? "", matchOn: childMatch)
        } else {
            children = nil
        }
        var links: [Parent] = []
        let value = settings.value("parent")
        let objects = value?.arrayValue.map { $0.map(\.objectValue) } ?? value.map { [$0.objectValue] } ?? []
        for (offset, object) in objects.enumerated() {
            let place = value?.arrayValue == nil ? "parent" : "parent[\(offset)]"
            guard let object else {
                settings.report(place, "must be an object: {soup or soups, key, matchOn, idField}")
                continue
            }
            for key in object.keys where !["soup", "soups", "key", "matchOn", "idField", "required"].contains(key) {
                settings.report("\(place).\(key)", "unknown key; expected soup (or soups), key, matchOn, idField, required")
            }
            let soups = object["soups"]?.arrayValue?.compactMap(\.stringValue) ?? object["soup"]?.stringValue.map { [$0] } ?? []
            guard !soups.isEmpty, let key = MatchKey.paths(object["key"]), let parentMatch = MatchKey.paths(object["matchOn"]),
                  let idField = object["idField"]?.stringValue else {
                settings.report(place, "needs soup (or soups), key, matchOn and idField (key and matchOn: a path, or lists of as many paths)")
                continue
            }
            if key.count != parentMatch.count {
                settings.report("\(place).key", "names \(key.count) path(s) and matchOn \(parentMatch.count): a composite key pairs them in order")
            }
            for soupName in soups {
                if !knownSoups.contains(where: { $0.name == soupName }) {
                    settings.report("\(place).soup", "no soup named \"\(soupName)\"; known soups: \(knownSoups.map(\.name).sorted().joined(separator: ", "))")
                }
                for path in parentMatch { checkIndexed(soupName, path, "\(place).matchOn") }
            }
            var link = Parent(soups: soups, key: MatchKey(key), matchOn: MatchKey(parentMatch), idField: idField)
            if let required = object["required"] {
                if let flag = required.boolValue { link.required = flag } else { settings.report("\(place).required", "must be true or false") }
            }
            if soups.contains(soup) {
                if soups.count > 1 { settings.report("\(place).soups", "a link into the stage's own soup names that soup only") }
                if matchOn.single == SyncField.soupEntryId { settings.report("matchOn", "a self-lookup needs records matched on a field, not _soupEntryId") }
                if matchOn.single == nil || key.count > 1 { settings.report("matchOn", "a self-lookup needs records matched on one path, not a composite key") }
            }
            links.append(link)
        }
        let soupName = soup
        parents = links.filter { !$0.soups.contains(soupName) }
        selfLinks = links.filter { $0.soups.contains(soupName) }
    }

    /// The members staging may add to a new entry: `attributes`, `Id` and the sync flags. A stage
    /// that grows its records anyway (a `transform`) makes this room too, so they grow once.
    static let fieldsAdded = SyncField.flags.count + 2

    /// A record and its line for the rejects file: where it started in a file upstream, else its
    /// 1-based position in the stage's input.
    struct Staged {
        var position: Int
        var record: JSONObject
    }

    public func run(in context: StageContext) async throws -> StageResult {
        var result = StageResult()
        var flagged = FlaggedEntries(tracking: markDirty && leaveIfChanged)
        var rejects = RejectsWriter(directory: context.reportDirectory, stageId: context.stageId)
        var position = 0
        // Records with a key the soup has never held are created without a lookup.
        try await context.store.trackValues(in: soup, path: matchOn.paths[0])
        if let children { try await context.store.trackValues(in: children.soup, path: children.matchOn) }
        /// Self-lookups to resolve once every record is staged.
        var pendingSelfLinks: [PendingSelfLink] = []
        /// Writes queued on the store's writer and not yet committed, oldest first.
        var pendingWrites: [QueuedWrite] = []
        /// Waits for the oldest queued write to commit.
        func settleOldest() async throws { try await flagged.settle(pendingWrites.removeFirst(), in: soup) }
        var meter = context.progress.meter(unit: "records")
        for try await var batch in context.inputBatches(batchSize: 5000, firstBatchSize: 1000) {
            var records = Self.takeRecords(&batch, position: &position)
            result.add(StageCounts.read, records.count)
            meter.advance(to: Int64(position))
            for parent in parents {
                records = try await linkParents(records, parent: parent, context: context, result: &result, rejects: &rejects)
            }
            setAsideSelfLinks(&records, into: &pendingSelfLinks)
            var nested: [[JSONObject]] = []
            if let children {
                nested = records.map { staged in
                    (staged.record[children.relationship]?["records"]?.arrayValue ?? []).compactMap(\.objectValue)
                }
                for index in records.indices { records[index].record[children.relationship] = nil }
            }
            guard let children else {
                // Without children nothing waits for this batch's ids: it is matched and prepared
                // while the two batches before it are written, and queued behind them, so the
                // store's writer goes from one batch to the next. A batch sharing a key with a
                // queued one first waits for that write, to match against it.
                let keys = Set(records.compactMap { matchOn.value(of: $0.record) })
                if let last = pendingWrites.lastIndex(where: { !keys.isDisjoint(with: $0.keys) }) {
                    for _ in 0...last { try await settleOldest() }
                }
                let plan = try await plan(consume records, into: soup, matchOn: matchOn, flagged: flagged, context: context, result: &result, rejects: &rejects)
                let prepared = try await plan.prepare(in: soup, context: context)
                if pendingWrites.count == 2 { try await settleOldest() }
                pendingWrites.append(plan.queue(prepared, keys: keys, context: context))
                if context.shouldStop { break }
                continue
            }
            let stored = try await write(records, into: soup, matchOn: matchOn, flagged: &flagged, context: context, result: &result, rejects: &rejects)
            var childRecords: [Staged] = []
            for ((entry, kids), parentRecord) in zip(zip(stored, nested), records) {
                guard let entry, let parentId = entry["Id"] else { continue }
                for var kid in kids {
                    kid[children.parentIdField] = parentId
                    childRecords.append(Staged(position: parentRecord.position, record: kid))
                }
            }
            _ = try await write(childRecords, into: children.soup, matchOn: MatchKey([children.matchOn]), flagged: &flagged, context: context,
                                result: &result, rejects: &rejects)
            if context.shouldStop { break }
        }
        while !pendingWrites.isEmpty { try await settleOldest() }
        if !context.shouldStop {
            try await resolveSelfLinks(pendingSelfLinks, flagged: flagged, context: context, result: &result, rejects: &rejects)
        }
        try rejects.close()
        return result
    }

    /// Takes each record out of `batch`, numbered on from `position`, so the stage owns it: an
    /// entry made from it grows in place rather than being copied.
    static func takeRecords(_ batch: inout [JSONValue], position: inout Int) -> [Staged] {
        var records: [Staged] = []
        records.reserveCapacity(batch.count)
        for index in batch.indices {
            guard case .object(let record) = batch[index] else { continue }
            batch[index] = .null
            position += 1
            records.append(Staged(position: RejectsWriter.line(of: record, position: position), record: record))
        }
        return records
    }

    /// Sets aside the self-lookups of `records` (resolved once every record is staged) and
    /// clears their fields, which hold keys, not ids, until then.
    func setAsideSelfLinks(_ records: inout [Staged], into pending: inout [PendingSelfLink]) {
        for link in selfLinks {
            for staged in records {
                guard let match = staged.record[matchOn.paths[0]], let key = staged.record[link.key.paths[0]], !Self.isEmpty(key) else { continue }
                pending.append(PendingSelfLink(position: staged.position, link: link, match: match, key: key, raw: staged.record))
            }
            for index in records.indices { records[index].record[link.key.paths[0]] = nil }
        }
    }

    /// Whether LEAVE_IF_CHANGED keeps `entry` as it is: dirty before this stage wrote to it (an
    /// entry the stage flagged itself, in an earlier batch, is written again).
    func keepsLocalChanges(_ entry: JSONObject, flagged: FlaggedEntries, in soupName: String) -> Bool {
        leaveIfChanged && entry.isDirty && !flagged.contains(entry.soupEntryId, in: soupName)
    }

    /// `true` for a key with no value: absent, null or empty text.
    static func isEmpty(_ value: JSONValue) -> Bool {
        value.isNull || value.stringValue?.isEmpty == true
    }

    /// Matches, merges and stores records in one soup; returns each record's stored entry (nil when
    /// it was rejected or left alone on conflict).
    func write(_ records: [Staged], into soupName: String, matchOn: MatchKey, flagged: inout FlaggedEntries, context: StageContext,
               result: inout StageResult, rejects: inout RejectsWriter) async throws -> [JSONObject?]
    {
        let plan = try await plan(records, into: soupName, matchOn: matchOn, flagged: flagged, context: context, result: &result, rejects: &rejects)
        let written = try await plan.queue(try await plan.prepare(in: soupName, context: context), context: context).write.value()
        flagged.add(plan.flagged, of: written, in: soupName)
        let stored = Array(written)
        return plan.positions.map { slot in
            switch slot {
            case .stored(let index): return stored[index]
            case .unchanged(let entry): return entry
            case .none: return nil
            }
        }
    }

    /// Writes a record's fields into an entry (`attributes`, `_soup…` and sync fields aside, and
    /// an empty `Id`: it never takes an entry's id away); returns whether any value changed.
    /// A record giving a local entry a server id says the record exists in the org: the entry is
    /// then no longer one to create (a create would make it twice) — its created flag is cleared.
    static func merge(_ record: JSONObject, into entry: inout JSONObject) -> Bool {
        let localBefore = entry["Id"]?.stringValue.map(SyncField.isLocalId) ?? true
        var changed = false
        for (key, value) in record where key != "attributes" && !key.hasPrefix("_soup") && !(key.hasPrefix("__") && key.hasSuffix("__")) {
            if key == "Id" && isEmpty(value) { continue }
            if entry[key] != value { entry[key] = value; changed = true }
        }
        // One created and deleted locally keeps both flags: it is removed here, never sent (a
        // delete sent with the server id would remove a record nobody here created).
        if localBefore, let id = entry["Id"]?.stringValue, !id.isEmpty, !SyncField.isLocalId(id),
           entry[SyncField.locallyCreated]?.isTruthy == true, entry[SyncField.locallyDeleted]?.isTruthy != true {
            entry[SyncField.locallyCreated] = false
            entry[SyncField.local] = .bool(entry[SyncField.locallyUpdated]?.isTruthy == true)
        }
        return changed
    }

    static func type(of record: JSONObject) -> String? {
        record["attributes"]?["type"]?.stringValue
    }

}

/// Local ids as Mobile SDK makes them, `local_<nanoseconds>`: increasing, so new entries append to
/// the soup's Id index instead of scattering writes across it.
struct LocalIdSequence {
    private var upcoming = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)

    mutating func next() -> String {
        defer { upcoming += 1 }
        return "local_\(upcoming)"
    }
}
