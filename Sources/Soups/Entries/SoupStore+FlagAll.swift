import Foundation
import GRDB
import JSON

extension SoupStore {
    /// What ``flagAll(_:in:)`` did, by object type (the entry's `attributes.type`, else the soup's name).
    public struct FlagCounts: Sendable, Equatable {
        /// Entries that took the flag.
        public var flagged: [String: Int] = [:]
        /// Entries already dirty with the flag, left as they were.
        public var unchanged: [String: Int] = [:]
    }

    /// Sets `flag` (`__locally_created__`, `__locally_updated__` or `__locally_deleted__`) and
    /// `__local__` on every entry of `soupName` not already dirty with it, as a read, an edit and a
    /// write of each entry would — in one SQL statement, without reading the entries into memory.
    /// Returns `nil`, changing nothing, when the soup indexes either flag for full-text search.
    public func flagAll(_ flag: String, in soupName: String) async throws -> FlagCounts? {
        precondition(SyncField.flags.contains(flag) && flag != SyncField.local, "\(flag) is not an operation flag")
        return try await pool.write { db in
            let table = try SoupTable.load(db, soupName: soupName)
            let flags: Set = [flag, SyncField.local]
            var columns: [(name: String, value: DatabaseValue)] = []
            for (index, column) in zip(table.spec.indexes, table.columns) where flags.contains(index.path) {
                if index.type == .fullText { return nil }
                if let column { columns.append((column, SoupTable.columnValue(.bool(true), type: index.type))) }
            }
            let t = table.tableName
            let flagPath = SoupTable.jsonPath(flag)
            // A clean entry's JSON is not read for the flag (CASE stops at `_local`), and its type is
            // read once, as JSON text: SQLite parses an entry's JSON again for each function.
            let already = "(CASE WHEN \(t)._local = 1 THEN json_extract(\(t).soup, '\(flagPath)') IS 1 ELSE 0 END)"
            var counts = FlagCounts()
            let rows = try Row.fetchAll(db, sql: "SELECT \(t).soup -> '$.attributes.type' AS type, \(already) AS already, count(*) AS n FROM \(t) GROUP BY 1, 2")
            for row in rows {
                // The type when it is a string, else the soup's name.
                let type: String? = row["type"]
                let name = type.flatMap { try? JSONParser.parse($0).stringValue } ?? soupName
                if row["already"] as Bool { counts.unchanged[name, default: 0] += row["n"] } else { counts.flagged[name, default: 0] += row["n"] }
            }
            guard !counts.flagged.isEmpty else { return counts }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let json = "json_set(soup, '\(flagPath)', json('true'), '\(SoupTable.jsonPath(SyncField.local))', json('true'), "
                + "'\(SoupTable.jsonPath(SyncField.soupLastModifiedDate))', ?)"
            let sets = ["soup = \(json)", "lastModified = ?", "_local = 1"] + columns.map { "\($0.name) = ?" }
            try db.execute(sql: "UPDATE \(t) SET \(sets.joined(separator: ", ")) WHERE NOT \(already)",
                           arguments: StatementArguments([now.databaseValue, now.databaseValue] + columns.map(\.value)))
            // Value filters of the flags' columns learn the one value written.
            for path in flags {
                guard let filter = self.valueFilter(for: soupName, path: path), filter.matches(table, path: path),
                      let value = columns.first(where: { $0.name == filter.column })?.value else { continue }
                if filter.insert(value) { try filter.rebuild(db) }
            }
            return counts
        }
    }
}
