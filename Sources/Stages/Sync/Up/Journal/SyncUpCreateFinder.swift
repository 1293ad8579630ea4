import Connectors
import Foundation
import Formats
import JSON
import SOQL
import Soups

/// Looks for creates whose answers were lost, a batch of records of one object per query:
/// records created by the running user inside the writes' journal windows, narrowed by the
/// values of one selective field (the resolved parent reference when there is one). A record
/// matches a write when it agrees on every field sent, on the resolved parent reference, on
/// `CreatedById` and on a `CreatedDate` inside that write's window (for a write of a Bulk job
/// the org no longer knows: from its send until now) — and no other soup entry
/// already holds its id (so an identical record of another tree is never taken).
struct SyncUpCreateFinder {
    /// What the org holds for one write.
    enum Match: Equatable {
        case notFound
        case one(String)
        case several([String])
    }

    typealias Item = (journal: SyncJournalEntry, parentId: String?)

    let client: any OrgClient
    let store: SoupStore
    let target: any SyncUpTarget
    let userId: String
    /// Milliseconds from a write's send to the end of its window (when the org can no longer apply it).
    let windowMs: Int64
    /// Clock-precision slack on both sides of a window (org dates have whole seconds).
    static let slackMs: Int64 = 3000
    /// Characters of filter values per query, so a GET query stays well under URL limits.
    static let filterBudget = 8000

    init(client: any OrgClient, store: SoupStore, target: any SyncUpTarget) async throws {
        self.client = client
        self.store = store
        self.target = target
        userId = try await client.currentUserId()
        windowMs = SyncUpSender.settlingMs(client)
    }

    /// The writes in groups small enough for one query each; the attempts of one entry (a create
    /// sent again) always share a group, as they are decided together.
    func batches(_ items: [Item]) -> [[Item]] {
        var batches: [[Item]] = []
        var current: [Item] = []
        var budget = 0
        let sorted = items.sorted { ($0.journal.soupName, $0.journal.entryId, $0.journal.id) < ($1.journal.soupName, $1.journal.entryId, $1.journal.id) }
        for item in sorted {
            let cost = (item.parentId?.count ?? item.journal.payload.map { $0.value.stringValue?.count ?? 0 }.max() ?? 0) + 4
            let sameEntry = current.last.map { $0.journal.soupName == item.journal.soupName && $0.journal.entryId == item.journal.entryId } ?? false
            if !current.isEmpty && !sameEntry && (current.count >= OrgLimits.collection || budget + cost > Self.filterBudget) {
                batches.append(current)
                current = []
                budget = 0
            }
            current.append(item)
            budget += cost
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    /// What the org holds for each write of the batch (all of one object), by journal id.
    func find(_ batch: [Item]) async throws -> [Int64: Match] {
        guard let type = batch.first?.journal.objectType else { return [:] }
        let describe = try await client.describe(type)
        var fields: [String: JSONObject] = [:]
        for field in describe["fields"]?.arrayValue ?? [] {
            if let name = field["name"]?.stringValue, let object = field.objectValue { fields[name.lowercased()] = object }
        }
        func canonical(_ name: String) -> String? { fields[name.lowercased()]?["name"]?.stringValue }

        let linkField = batch.lazy.compactMap { $0.journal.link?.field }.first.flatMap(canonical)
        var compared = Set<String>()
        for item in batch { for name in item.journal.payload.keys { if let name = canonical(name) { compared.insert(name) } } }
        if let linkField { compared.insert(linkField) }
        // A Bulk job's rows are applied whenever the org runs the job, long after they were
        // journaled; a job the org no longer knows runs no more, so its window ends now.
        let now = client.clock.now() + (await client.serverClockOffset())
        func window(_ journal: SyncJournalEntry) -> ClosedRange<Int64> {
            let start = journal.serverSentAt ?? journal.sentAt
            return (start - Self.slackMs)...(max(start + windowMs, journal.bulkJobId == nil ? 0 : now) + Self.slackMs)
        }
        let windows = batch.map { window($0.journal) }
        let earliest = SOQLDateTime(epochMilliseconds: windows.map(\.lowerBound).min() ?? 0)
        let latest = SOQLDateTime(epochMilliseconds: windows.map(\.upperBound).max() ?? 0)
        let select = ["Id", "CreatedDate", "CreatedById"] + compared.subtracting(["Id", "CreatedDate", "CreatedById"]).sorted()
        var query = try SOQLQuery(selecting: select, from: type)
        query.addFilter(try .compare("CreatedById", .equal, .string(userId)))
        if let earliest, let latest {
            query.addFilter(try .compare("CreatedDate", .greaterThanOrEqual, .dateTime(earliest)))
            query.addFilter(try .compare("CreatedDate", .lessThanOrEqual, .dateTime(latest)))
        }
        if let filter = filterField(batch, linkField: linkField, fields: fields, canonical: canonical) {
            query.addFilter(try .isIn(filter.name, filter.values.sorted()))
        }
        var records: [JSONObject] = []
        for try await record in client.query(query) {
            records.append(record)
        }

        // Ids another entry already holds are not candidates.
        let soup = batch[0].journal.soupName
        let idField = target.idFieldName(inSoup: soup)
        let holders = try await store.entries(in: soup, where: idField, in: records.compactMap { $0["Id"] })
        var claimed: [String: Set<Int64>] = [:]
        for (id, owners) in holders { claimed[SalesforceId.key(id), default: []].formUnion(owners.compactMap(\.soupEntryId)) }

        var matches: [Int64: Match] = [:]
        for (journal, parentId) in batch {
            let window = window(journal)
            let ids = records.filter { record in
                guard SalesforceId.key(record["CreatedById"]) == SalesforceId.key(.string(userId)),
                      let created = ServerTimestamp.milliseconds(record["CreatedDate"]), window.contains(created) else { return false }
                if let link = journal.link, let field = canonical(link.field),
                   SalesforceId.key(record[field]) != SalesforceId.key(parentId.map(JSONValue.string)) { return false }
                let owners = claimed[SalesforceId.key(record["Id"])] ?? []
                if !owners.subtracting([journal.entryId]).isEmpty { return false }
                return journal.payload.allSatisfy { name, value in
                    guard let field = canonical(name) else { return true }
                    return SyncUpValueMatch.same(sent: value, stored: record[field])
                }
            }.compactMap { $0["Id"]?.stringValue }
            switch ids.count {
            case 0: matches[journal.id] = .notFound
            case 1: matches[journal.id] = .one(ids[0])
            default: matches[journal.id] = .several(ids)
            }
        }
        // Writes of two entries may not take the same record; attempts of one entry are one
        // claimant (its create sent again), decided together by the reconciler.
        var takers: [String: [SyncJournalEntry]] = [:]
        for (journal, _) in batch { if case .one(let id)? = matches[journal.id] { takers[id, default: []].append(journal) } }
        for (id, journals) in takers where Set(journals.map { "\($0.soupName)/\($0.entryId)" }).count > 1 {
            for journal in journals { matches[journal.id] = .several([id]) }
        }
        return matches
    }

    /// The most selective field every write of the batch sent a short text value for: the
    /// resolved parent reference when the writes have one, else a filterable text field.
    private func filterField(_ batch: [Item], linkField: String?, fields: [String: JSONObject],
                             canonical: (String) -> String?) -> (name: String, values: Set<String>)? {
        if let linkField {
            if batch.allSatisfy({ $0.parentId != nil }) { return (linkField, Set(batch.compactMap(\.parentId))) }
        }
        let textTypes: Set<String> = ["string", "email", "phone", "url", "picklist", "reference", "id", "combobox"]
        var best: (name: String, values: Set<String>)?
        for name in Set(batch.flatMap { $0.journal.payload.keys }).sorted() {
            guard let field = canonical(name), let describe = fields[field.lowercased()],
                  textTypes.contains(describe["type"]?.stringValue ?? ""), describe["filterable"]?.boolValue != false else { continue }
            var values = Set<String>()
            let complete = batch.allSatisfy { item in
                guard let text = item.journal.payload[name]?.stringValue, !text.isEmpty, text.count <= 255 else { return false }
                values.insert(text)
                return true
            }
            if complete && values.count > (best?.values.count ?? 0) { best = (field, values) }
        }
        return best
    }
}
