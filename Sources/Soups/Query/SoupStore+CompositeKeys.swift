import GRDB
import JSON

extension SoupStore {
    /// The entries whose `paths` all equal one of `keys` (a value per path, each compared as its
    /// path's index stores it), grouped by key: a composite natural key such as `LastName` +
    /// `Birthdate` + `MailingPostalCode`. Queried by the first path, narrowed by the others.
    public func entries(in soupName: String, where paths: [String], in keys: [[JSONValue]]) async throws -> [[JSONValue]: [JSONObject]] {
        guard let first = paths.first, !keys.isEmpty else { return [:] }
        var firsts: [JSONValue] = []
        var seenFirsts = Set<JSONValue>()
        for key in keys where seenFirsts.insert(key[0]).inserted { firsts.append(key[0]) }
        let byFirst = try await entries(in: soupName, where: first, in: firsts)
        guard !byFirst.isEmpty else { return [:] }
        let types = try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            return paths.map { table.indexType(forPath: $0) }
        }
        func comparable(_ values: [JSONValue]) -> [DatabaseValue] {
            zip(values, zip(paths, types)).map { value, path in Self.comparable(value, path: path.0, type: path.1) }
        }
        var wanted: [[DatabaseValue]: [[JSONValue]]] = [:]
        for key in keys where key.count == paths.count {
            let compared = comparable(key)
            if !(wanted[compared]?.contains(key) ?? false) { wanted[compared, default: []].append(key) }
        }
        var found: [[JSONValue]: [JSONObject]] = [:]
        var placed: [[JSONValue]: Set<Int64>] = [:]
        for entry in byFirst.values.joined() {
            let values = paths.map { JSONValue.object(entry).value(atPath: $0) ?? .null }
            for key in wanted[comparable(values)] ?? [] where placed[key, default: []].insert(entry.soupEntryId ?? -1).inserted {
                found[key, default: []].append(entry)
            }
        }
        return found
    }
}
