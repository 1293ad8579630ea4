import Foundation
import GRDB
import JSON

extension SoupStore {
    /// Creates a soup, its index columns, SQL indexes and (for `full_text` indexes) its FTS5 table.
    ///
    /// As in SmartStore's `userstore.json` loading, registering a soup that already exists with the
    /// same indexes does nothing; with different indexes it adds the missing ones.
    /// - Returns: `true` when the soup was created.
    @discardableResult
    public func registerSoup(_ spec: SoupSpec) async throws -> Bool {
        try Self.validate(spec)
        // Value filters describe the soup's table as it was; its indexes may change here.
        valueFilters.withLock { $0[spec.name] = nil }
        return try await pool.write { db in
            if let existing = try? SoupTable.load(db, soupName: spec.name) {
                let missing = spec.indexes.filter { index in !existing.spec.indexes.contains(index) }
                if missing.isEmpty { return false }
                try Self.addIndexes(missing, to: existing, db)
                return false
            }
            let indexesJSON = String(decoding: try JSONEncoder().encode(spec.indexes), as: UTF8.self)
            try db.execute(sql: "INSERT INTO soup_attrs (soupName, indexes) VALUES (?, ?)", arguments: [spec.name, indexesJSON])
            let table = SoupTable(spec: spec, soupId: db.lastInsertedRowID)
            var columnDefinitions = [
                "id INTEGER PRIMARY KEY AUTOINCREMENT", "soup TEXT NOT NULL", "created INTEGER NOT NULL",
                "lastModified INTEGER NOT NULL", "_local INTEGER NOT NULL DEFAULT 0", "_syncId INTEGER", "_confirmed TEXT",
            ]
            for (index, column) in zip(spec.indexes, table.columns) {
                if let column { columnDefinitions.append("\(column) \(Self.sqlType(index.type))") }
            }
            try db.execute(sql: "CREATE TABLE \(table.tableName) (\(columnDefinitions.joined(separator: ", ")))")
            try Self.createBookkeepingIndexes(for: table.tableName, db)
            try Self.createSQLIndexes(for: table, indexes: Array(spec.indexes.indices), db)
            if table.hasFullText { try Self.createFTS(for: table, db) }
            return true
        }
    }

    /// Indexes on the hidden columns: dirty entries and entries of a sync, as partial indexes so
    /// that the clean, unsynced entries a bulk load writes cost them nothing; and the last-modified
    /// time. Stores made with the earlier full indexes get these instead.
    /// The indexes of a soup table's bookkeeping columns (dirty entries, a sync's entries, by
    /// modification); replaces the full indexes of older stores with partial ones.
    static func createBookkeepingIndexes(for tableName: String, _ db: Database) throws {
        try db.execute(sql: """
            DROP INDEX IF EXISTS \(tableName)_local;
            DROP INDEX IF EXISTS \(tableName)_syncId;
            CREATE INDEX \(tableName)_local ON \(tableName) (id) WHERE _local = 1;
            CREATE INDEX \(tableName)_syncId ON \(tableName) (_syncId, id) WHERE _syncId IS NOT NULL;
            CREATE INDEX IF NOT EXISTS \(tableName)_lastModified ON \(tableName) (lastModified);
            """)
    }

    /// The specs of every soup, by name.
    public func soupSpecs() async throws -> [SoupSpec] {
        try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT soupName FROM soup_attrs ORDER BY soupName").map {
                try SoupTable.load(db, soupName: $0).spec
            }
        }
    }

    /// The spec of one soup.
    public func soupSpec(named name: String) async throws -> SoupSpec {
        try await pool.read { db in try SoupTable.load(db, soupName: name).spec }
    }

    /// `true` when a soup of that name exists.
    public func hasSoup(named name: String) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT COUNT(*) > 0 FROM soup_attrs WHERE soupName = ?", arguments: [name]) ?? false
        }
    }

    /// Removes a soup and all its entries.
    public func dropSoup(named name: String) async throws {
        valueFilters.withLock { $0[name] = nil }
        try await pool.write { db in
            let table = try SoupTable.load(db, soupName: name)
            try db.execute(sql: "DROP TABLE \(table.tableName)")
            if table.hasFullText { try db.execute(sql: "DROP TABLE \(table.ftsTableName)") }
            try db.execute(sql: "DELETE FROM soup_attrs WHERE soupName = ?", arguments: [name])
        }
    }

    /// Removes all entries of a soup, keeping the soup.
    public func clearSoup(named name: String) async throws {
        try await pool.write { db in
            let table = try SoupTable.load(db, soupName: name)
            try db.execute(sql: "DELETE FROM \(table.tableName)")
            if table.hasFullText { try db.execute(sql: "DELETE FROM \(table.ftsTableName)") }
        }
    }

    static func validate(_ spec: SoupSpec) throws {
        guard !spec.name.isEmpty else { throw SoupStoreError.invalidSoupSpec("a soup needs a non-empty name") }
        var seen = Set<String>()
        for index in spec.indexes {
            guard !index.path.isEmpty else {
                throw SoupStoreError.invalidSoupSpec("soup \"\(spec.name)\": an index needs a non-empty path")
            }
            guard seen.insert(index.path).inserted else {
                throw SoupStoreError.invalidSoupSpec("soup \"\(spec.name)\": path \"\(index.path)\" is indexed twice")
            }
        }
    }

    static func sqlType(_ type: IndexType) -> String {
        switch type {
        case .string, .fullText, .json1: return "TEXT"
        case .integer: return "INTEGER"
        case .floating: return "REAL"
        }
    }

    static func createSQLIndexes(for table: SoupTable, indexes: [Int], _ db: Database) throws {
        for offset in indexes {
            let expression = table.columns[offset] ?? "json_extract(soup, '\(SoupTable.jsonPath(table.spec.indexes[offset].path))')"
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(table.tableName)_\(offset)_idx ON \(table.tableName) (\(expression))")
        }
    }

    static func createFTS(for table: SoupTable, _ db: Database) throws {
        let ftsColumns = zip(table.spec.indexes, table.columns).compactMap { index, column in
            index.type == .fullText ? column : nil
        }
        try db.execute(sql: "CREATE VIRTUAL TABLE \(table.ftsTableName) USING fts5(\(ftsColumns.joined(separator: ", ")))")
        try db.execute(sql: """
            INSERT INTO \(table.ftsTableName) (rowid, \(ftsColumns.joined(separator: ", ")))
            SELECT id, \(ftsColumns.joined(separator: ", ")) FROM \(table.tableName)
            """)
    }

    /// Adds indexes to an existing soup and fills their columns from the stored entries.
    static func addIndexes(_ added: [IndexSpec], to existing: SoupTable, _ db: Database) throws {
        let spec = SoupSpec(name: existing.spec.name, indexes: existing.spec.indexes.filter { old in
            !added.contains { $0.path == old.path }
        } + added)
        guard spec.indexes.count == existing.spec.indexes.count + added.count else {
            throw SoupStoreError.invalidSoupSpec(
                "soup \"\(spec.name)\" exists with other index types for \(added.map(\.path).joined(separator: ", "))")
        }
        let soupId = try Int64.fetchOne(db, sql: "SELECT id FROM soup_attrs WHERE soupName = ?", arguments: [spec.name])!
        let table = SoupTable(spec: spec, soupId: soupId)
        let newOffsets = Array(existing.spec.indexes.count..<spec.indexes.count)
        for offset in newOffsets {
            if let column = table.columns[offset] {
                try db.execute(sql: "ALTER TABLE \(table.tableName) ADD COLUMN \(column) \(sqlType(spec.indexes[offset].type))")
            }
        }
        let indexesJSON = String(decoding: try JSONEncoder().encode(spec.indexes), as: UTF8.self)
        try db.execute(sql: "UPDATE soup_attrs SET indexes = ? WHERE id = ?", arguments: [indexesJSON, soupId])
        let rows = try Row.fetchCursor(db, sql: "SELECT id, soup FROM \(table.tableName)")
        while let row = try rows.next() {
            guard let entry = try? JSONParser.parse(row["soup"] as String).objectValue else { continue }
            for offset in newOffsets {
                guard let column = table.columns[offset] else { continue }
                let index = spec.indexes[offset]
                try db.execute(
                    sql: "UPDATE \(table.tableName) SET \(column) = ? WHERE id = ?",
                    arguments: [SoupTable.columnValue(JSONValue.object(entry).value(atPath: index.path), type: index.type), row["id"] as Int64])
            }
        }
        try createSQLIndexes(for: table, indexes: newOffsets, db)
        if added.contains(where: { $0.type == .fullText }) {
            if existing.hasFullText { try db.execute(sql: "DROP TABLE \(table.ftsTableName)") }
            try createFTS(for: table, db)
        }
    }
}
