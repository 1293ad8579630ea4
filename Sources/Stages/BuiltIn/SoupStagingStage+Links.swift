import Foundation
import JSON
import Soups

/// Links to parents: a record naming its parent by a key gets the parent's id as each batch is
/// staged; one naming a record of its own soup waits until the whole input is staged.
extension SoupStagingStage {
    /// A record's link to another record of the same soup, waiting for the whole input.
    struct PendingSelfLink {
        var position: Int
        var link: Parent
        /// The record's own `matchOn` value, and its key naming the parent.
        var match: JSONValue
        var key: JSONValue
        var raw: JSONObject
    }

    /// Sets each self-lookup now that every record is in the soup (a parent later in the input is
    /// found); a record whose parent is not there is rejected, its entry staged without the link.
    /// Under LEAVE_IF_CHANGED an entry with local changes (its record a conflict) is left alone;
    /// only entries whose link changes are written again.
    func resolveSelfLinks(_ pending: [PendingSelfLink], flagged: FlaggedEntries, context: StageContext, result: inout StageResult,
                          rejects: inout RejectsWriter) async throws {
        for chunk in pending.chunked(into: 2000) {
            var changes = SoupChangeSet()
            var entries: [JSONValue: JSONObject] = [:]
            for (value, matches) in try await context.store.entries(in: soup, where: matchOn.paths[0], in: chunk.map(\.match)) where matches.count == 1 {
                entries[value] = matches[0]
            }
            let confirmed = markDirty ? try await context.store.confirmed(ids: entries.values.compactMap(\.soupEntryId), in: soup) : [:]
            var linked = Set<JSONValue>()
            var byLink: [String: [PendingSelfLink]] = [:]
            for item in chunk { byLink[item.link.matchOn.paths[0] + "\u{0}" + item.link.idField, default: []].append(item) }
            for group in byLink.values {
                let link = group[0].link
                let parents = try await context.store.entries(in: soup, where: link.matchOn.paths[0], in: group.map(\.key), keepingOnly: "Id")
                for item in group {
                    // Its record counted a conflict: left as it is.
                    if let entry = entries[item.match], keepsLocalChanges(entry, flagged: flagged, in: soup) { continue }
                    let candidates = parents[item.key] ?? []
                    guard candidates.count == 1, let id = candidates[0]["Id"], var entry = entries[item.match] else {
                        let keyText = item.key.stringValue ?? item.key.jsonString
                        try rejects.add(line: item.position, reason: "\(candidates.count > 1 ? "ambiguous parent" : "missing parent"): \(link.key) = \(keyText) (the record is staged without \(link.idField))",
                                        raw: JSONValue.object(item.raw).jsonString)
                        result.add(StageCounts.rejected, object: Self.type(of: item.raw) ?? sobjectType ?? "records")
                        continue
                    }
                    guard entry[link.idField] != id else { continue }
                    entry[link.idField] = id
                    if markDirty { MarkDirtyStage.markAuto(&entry, confirmed: entry.soupEntryId.flatMap { confirmed[$0] }) }
                    entries[item.match] = entry
                    linked.insert(item.match)
                }
            }
            // Only the entries a link changed are written again.
            for (match, entry) in entries where linked.contains(match) { changes.save(entry, in: soup) }
            try await context.store.apply(changes)
        }
    }

    /// Fills each record's `idField` with its parent entry's id — from the first of the link's soups
    /// holding it; records without a parent are rejected (unless the link is optional and the
    /// record names none).
    func linkParents(_ records: [Staged], parent: Parent, context: StageContext, result: inout StageResult,
                     rejects: inout RejectsWriter) async throws -> [Staged] {
        let keys = records.compactMap { parent.key.value(of: $0.record) }
        var found: [[JSONValue: [JSONObject]]] = []
        for soupName in parent.soups { found.append(try await parent.matchOn.entries(in: soupName, of: keys, store: context.store, keepingOnly: "Id")) }
        var linked: [Staged] = []
        for staged in records {
            var record = staged.record
            let object = Self.type(of: record) ?? sobjectType ?? "records"
            let key = parent.key.value(of: record)
            if !parent.required, key == nil {
                for path in parent.key.paths { record[path] = nil }
                linked.append(Staged(position: staged.position, record: record))
                continue
            }
            let matches = key.flatMap { key in found.lazy.compactMap { $0[key] }.first { !$0.isEmpty } } ?? []
            guard matches.count == 1, let id = matches[0]["Id"] else {
                let keyText = parent.key.single.flatMap { record[$0] }.map { $0.stringValue ?? $0.jsonString } ?? key?.jsonString ?? "(none)"
                try rejects.add(line: staged.position, reason: "\(matches.count > 1 ? "ambiguous parent" : "missing parent"): \(parent.key) = \(keyText)",
                                raw: JSONValue.object(staged.record).jsonString)
                result.add(StageCounts.rejected, object: object)
                continue
            }
            record[parent.idField] = id
            for path in parent.key.paths { record[path] = nil }
            linked.append(Staged(position: staged.position, record: record))
        }
        return linked
    }
}
