import JSON
import Soups

/// Planning a batch: each record matched to the soup's entries (or an earlier record's) and
/// merged, created, left alone or rejected.
extension SoupStagingStage {
    /// A batch's plan as it is built, and what later records of the batch are matched against.
    struct BatchPlanning {
        var plan = WritePlan()
        var localIds = LocalIdSequence()
        /// Where an entry some record of the batch already landed on is in `toStore`: a stored
        /// entry by `_soupEntryId`, a new one by its `matchOn` value (an empty one matches nothing).
        var claimed: [Int64: Int] = [:]
        var created: [JSONValue: Int] = [:]
        /// An entry of `toStore` as a record from the org left it: what a later local record in
        /// the batch is compared with (`markDirty`).
        var orgSaid: [Int: JSONObject] = [:]
    }

    /// Matches records to the soup's entries and merges them; counts and rejects each record.
    /// Records matching one entry merge into it in turn, the later values winning, as across batches.
    /// Each record is taken out of `records` as it is planned: one the caller no longer holds
    /// becomes its new entry without a copy.
    func plan(_ records: consuming [Staged], into soupName: String, matchOn: MatchKey, flagged: FlaggedEntries, context: StageContext,
              result: inout StageResult, rejects: inout RejectsWriter) async throws -> WritePlan
    {
        guard !records.isEmpty else { return WritePlan() }
        let keys = records.compactMap { matchOn.value(of: $0.record) }
        let existing = try await matchOn.entries(in: soupName, of: keys, store: context.store)
        let confirmed = markDirty ? try await context.store.confirmed(ids: existing.values.joined().compactMap(\.soupEntryId), in: soupName) : [:]
        var planning = BatchPlanning()
        planning.plan.toStore.reserveCapacity(records.count)
        planning.plan.positions.reserveCapacity(records.count)
        for offset in records.indices {
            let position = records[offset].position
            let record = records[offset].record
            records[offset].record = JSONObject()
            let object = Self.type(of: record) ?? sobjectType ?? "records"
            // Read from the org: what the org holds, so a clean entry it lands on stays clean.
            let fromOrg = record["attributes"]?["url"]?.stringValue != nil
            // No key (absent, null or empty): a new entry.
            let key = matchOn.value(of: record)
            let matches = key.flatMap { existing[$0] } ?? []
            if matches.count > 1 {
                try rejects.add(line: position, reason: "\(matches.count) entries of \(soupName) have \(matchOn.describe(key!))",
                                raw: JSONValue.object(record).jsonString)
                result.add(StageCounts.rejected, object: object)
                planning.plan.positions.append(.none)
            } else if matches.isEmpty, let key, let earlier = planning.created[key] {
                // A key new to the soup, again in the batch: the entry the first record created.
                mergeAgain(record, into: earlier, fromOrg: fromOrg, object: object, &planning, result: &result)
            } else if let match = matches.first {
                if keepsLocalChanges(match, flagged: flagged, in: soupName) {
                    result.add(StageCounts.conflicts, object: object)
                    planning.plan.positions.append(.none)
                } else {
                    merge(record, into: match, fromOrg: fromOrg, object: object, confirmed: confirmed, &planning, result: &result)
                }
            } else if let type = Self.type(of: record) ?? sobjectType {
                create(consume record, type: type, key: key, fromOrg: fromOrg, &planning, result: &result)
            } else {
                try rejects.add(line: position, reason: "no attributes.type (set the stage's sobjectType)", raw: JSONValue.object(record).jsonString)
                result.add(StageCounts.rejected)
                planning.plan.positions.append(.none)
            }
        }
        return planning.plan
    }

    /// Merges a record into the entry an earlier record of the batch created.
    func mergeAgain(_ record: JSONObject, into earlier: Int, fromOrg: Bool, object: String, _ planning: inout BatchPlanning,
                    result: inout StageResult) {
        var entry = planning.plan.toStore[earlier]
        let changed = Self.merge(record, into: &entry)
        result.add(changed ? StageCounts.updated : StageCounts.unchanged, object: object)
        if fromOrg {
            if planning.orgSaid[earlier] != nil { planning.orgSaid[earlier] = entry }
        } else {
            planning.plan.confirming.remove(earlier)
            if markDirty, MarkDirtyStage.markAuto(&entry, confirmed: planning.orgSaid[earlier]) { planning.plan.flagged.append(earlier) }
        }
        planning.plan.toStore[earlier] = entry
        planning.plan.positions.append(.stored(earlier))
    }

    /// Merges a record into the soup's entry it matched (or that entry as an earlier record of
    /// the batch left it); an entry nothing changed is not written.
    func merge(_ record: JSONObject, into match: JSONObject, fromOrg: Bool, object: String, confirmed: [Int64: JSONObject],
               _ planning: inout BatchPlanning, result: inout StageResult) {
        let id = match.soupEntryId
        let earlier = id.flatMap { planning.claimed[$0] }
        var entry = earlier.map { planning.plan.toStore[$0] } ?? match
        var changed = Self.merge(record, into: &entry)
        if entry["attributes"] == nil, let type = Self.type(of: record) ?? sobjectType { entry["attributes"] = ["type": .string(type)]; changed = true }
        let orgHolds = fromOrg && !match.isDirty
        var marked = false
        if markDirty && !orgHolds {
            // Flagged after the merge: `auto` compares the merged values with the org's.
            let baseline = earlier.flatMap { planning.orgSaid[$0] } ?? id.flatMap { planning.plan.confirmingUnchanged[$0] ?? confirmed[$0] }
            marked = MarkDirtyStage.markAuto(&entry, confirmed: baseline)
        }
        result.add(changed ? StageCounts.updated : StageCounts.unchanged, object: object)
        if let earlier {
            if marked { planning.plan.flagged.append(earlier) }
            if orgHolds {
                planning.orgSaid[earlier] = entry
            } else if planning.plan.confirming.remove(earlier) != nil, let id, let said = planning.orgSaid[earlier] {
                // What the org returned stays confirmed; the write leaves it alone.
                planning.plan.confirmingUnchanged[id] = said
            }
            planning.plan.toStore[earlier] = entry
            planning.plan.positions.append(.stored(earlier))
        } else if changed || marked, let id {
            let index = planning.plan.toStore.count
            planning.claimed[id] = index
            if marked { planning.plan.flagged.append(index) }
            if orgHolds {
                planning.plan.confirming.insert(index)
                planning.orgSaid[index] = entry
            }
            planning.plan.positions.append(.stored(index))
            planning.plan.toStore.append(entry)
        } else {
            if orgHolds, let id { planning.plan.confirmingUnchanged[id] = entry }
            planning.plan.positions.append(.unchanged(entry))
        }
    }

    /// A new entry made of the record itself (taken, not copied): its type, a `local_` id when
    /// it has none, the sync flags.
    func create(_ record: consuming JSONObject, type: String, key: JSONValue?, fromOrg: Bool, _ planning: inout BatchPlanning,
                result: inout StageResult) {
        let index = planning.plan.toStore.count
        var entry = consume record
        // Room for the attributes, the id and the flags added: one allocation.
        entry.reserveCapacity(entry.count + Self.fieldsAdded)
        entry["attributes"] = ["type": .string(type)]
        if entry["Id"]?.stringValue?.isEmpty ?? true { entry["Id"] = .string(planning.localIds.next()) }
        for flag in SyncField.flags where entry[flag] == nil { entry[flag] = .bool(false) }
        if fromOrg {
            planning.plan.confirming.insert(index)
            planning.orgSaid[index] = entry
        } else if markDirty, MarkDirtyStage.markAuto(&entry, confirmed: nil) {
            planning.plan.flagged.append(index)
        }
        result.add(StageCounts.created, object: type)
        if let key { planning.created[key] = index }
        planning.plan.positions.append(.stored(index))
        planning.plan.toStore.append(entry)
    }
}
