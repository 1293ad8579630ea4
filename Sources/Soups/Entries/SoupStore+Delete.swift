import GRDB
import JSON

extension SoupStore {
    /// Deletes entries by `_soupEntryId`; returns how many were removed.
    @discardableResult
    public func delete(ids: [Int64], from soupName: String) async throws -> Int {
        try await pool.write { db in try Self.delete(ids: ids, from: soupName, db) }
    }

    /// Deletes every entry a query selects (all pages); returns how many were removed.
    @discardableResult
    public func delete(matching spec: QuerySpec) async throws -> Int {
        try await pool.write { db in
            let table = try SoupTable.load(db, soupName: spec.soupName)
            let (condition, arguments) = try Self.condition(for: spec.kind, table: table)
            let ids = try Int64.fetchAll(
                db, sql: "SELECT id FROM \(table.tableName) \(condition.isEmpty ? "" : "WHERE " + condition)", arguments: arguments)
            return try Self.delete(ids: ids, from: spec.soupName, db)
        }
    }

    static func delete(ids: [Int64], from soupName: String, _ db: Database) throws -> Int {
        let table = try SoupTable.load(db, soupName: soupName)
        var removed = 0
        for chunk in ids.chunked(into: 500) {
            let placeholders = chunk.map { _ in "?" }.joined(separator: ",")
            try db.execute(sql: "DELETE FROM \(table.tableName) WHERE id IN (\(placeholders))", arguments: StatementArguments(chunk))
            removed += db.changesCount
            if table.hasFullText {
                try db.execute(sql: "DELETE FROM \(table.ftsTableName) WHERE rowid IN (\(placeholders))", arguments: StatementArguments(chunk))
            }
        }
        return removed
    }
}
