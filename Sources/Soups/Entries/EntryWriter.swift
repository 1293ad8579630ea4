import Foundation
import GRDB
import JSON

/// Writes entries of one soup inside one transaction, with statements prepared once and bound
/// directly (see ``RawStatement``).
final class EntryWriter {
    let table: SoupTable
    let db: Database
    /// The `_soupLastModifiedDate` (and `_soupCreatedDate` of new entries) of this write.
    let now: Int64
    private let insert: RawStatement
    private let update: RawStatement
    /// The same two, also writing what the org confirmed (`_confirmed`), prepared when first needed.
    private var confirmingStatements: (insert: RawStatement, update: RawStatement)?
    private var findByExternalId: (path: String, statement: RawStatement)?
    /// The full-text paths and the statements that replace an entry's row, prepared when first needed.
    private var fullText: (paths: [String], delete: RawStatement, insert: RawStatement)?
    private var nextId: Int64
    /// The stored JSON of the entry being written, reused from one entry to the next.
    private var text: [UInt8] = []
    /// Value filters to keep current, with the position of each one's value among index values.
    private let filters: [(filter: SoupValueFilter, valueIndex: Int)]
    /// Filters that filled up during this write.
    private var fullFilters: [SoupValueFilter] = []

    init(table: SoupTable, filters: [(filter: SoupValueFilter, valueIndex: Int)], db: Database) throws {
        self.table = table
        self.filters = filters
        self.db = db
        (insert, update) = try Self.statements(table: table, confirming: false, db: db)
        now = Int64(Date().timeIntervalSince1970 * 1000)
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table.tableName]) ?? 0
        let maxId = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM \(table.tableName)") ?? 0
        nextId = max(sequence, maxId) + 1
    }

    /// The INSERT and UPDATE of an entry: its JSON, dates, sync columns and index columns, and
    /// with `confirming` its `_confirmed` values too.
    private static func statements(table: SoupTable, confirming: Bool, db: Database) throws -> (insert: RawStatement, update: RawStatement) {
        let written = ["soup", "lastModified", "_local", "_syncId"] + table.columns.compactMap { $0 } + (confirming ? ["_confirmed"] : [])
        let insertColumns = ["id", "created"] + written
        let insert = try RawStatement(db, sql: """
            INSERT INTO \(table.tableName) (\(insertColumns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")))
            """)
        let update = try RawStatement(db, sql: """
            UPDATE \(table.tableName) SET \(written.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
            """)
        return (insert, update)
    }

    /// Stores one entry and returns its `_soupEntryId`; see ``SoupStore/upsert(_:into:externalIdPath:)``.
    func write(_ prepared: PreparedEntry, externalIdPath: String) throws -> Int64 {
        let existingId = try self.existingId(of: prepared.entry, externalIdPath: externalIdPath)
        let id: Int64
        if let existingId {
            id = existingId
        } else {
            id = nextId
            nextId += 1
        }
        prepared.writeStoredJSON(id: id, modified: now, into: &text)
        let isNew = existingId == nil
        var statements = (insert: insert, update: update)
        if prepared.confirmed != nil {
            if confirmingStatements == nil { confirmingStatements = try Self.statements(table: table, confirming: true, db: db) }
            statements = confirmingStatements!
        }
        let statement = isNew ? statements.insert : statements.update
        var parameter: Int32 = 0
        func next() -> Int32 {
            parameter += 1
            return parameter
        }
        if isNew {
            statement.bind(id, at: next())
            statement.bind(now, at: next())
        }
        statement.bind(text: text, at: next())
        statement.bind(now, at: next())
        statement.bind(prepared.local ? 1 : 0, at: next())
        statement.bind(prepared.syncId?.databaseValue ?? .null, at: next())
        for value in prepared.indexValues { statement.bind(value, at: next()) }
        if let confirmed = prepared.confirmed { statement.bind(text: confirmed, at: next()) }
        if !isNew { statement.bind(id, at: next()) }
        try statement.execute()
        // An entry written by its `_soupEntryId` must exist: an update that changed nothing did not.
        if !isNew && statement.changes == 0 { throw SoupStoreError.unknownEntry(soup: table.spec.name, id: id) }
        if table.hasFullText { try writeFullText(id: id, entry: .object(prepared.entry), replacing: !isNew) }
        for (filter, valueIndex) in filters where filter.insert(prepared.indexValues[valueIndex]) {
            if !fullFilters.contains(where: { $0 === filter }) { fullFilters.append(filter) }
        }
        return id
    }

    /// Ends the write: filters that filled up are rebuilt larger (inside the transaction, so they
    /// see every entry).
    func finish() throws {
        for filter in fullFilters { try filter.rebuild(db) }
    }

    private func existingId(of entry: JSONObject, externalIdPath: String) throws -> Int64? {
        // Known by its `_soupEntryId`: the update itself tells whether it exists (see `write`).
        if let id = entry.soupEntryId { return id }
        guard externalIdPath != SyncField.soupEntryId else { return nil }
        let value = JSONValue.object(entry).value(atPath: externalIdPath)
        guard let value, !value.isNull, value != .string("") else {
            throw SoupStoreError.emptyExternalId(soup: table.spec.name, path: externalIdPath)
        }
        let type = table.indexType(forPath: externalIdPath) ?? .json1
        let key = type == .json1 ? Self.json1Value(value) : SoupTable.columnValue(value, type: type)
        let statement: RawStatement
        if let found = findByExternalId, found.path == externalIdPath {
            statement = found.statement
        } else {
            statement = try RawStatement(
                db, sql: "SELECT id FROM \(table.tableName) WHERE \(table.expression(forPath: externalIdPath)) = ? LIMIT 2")
            findByExternalId = (externalIdPath, statement)
        }
        statement.bind(key, at: 1)
        let ids = try statement.fetchIntegers(limit: 2)
        if ids.count > 1 {
            throw SoupStoreError.ambiguousExternalId(soup: table.spec.name, path: externalIdPath, value: value.jsonString)
        }
        return ids.first
    }

    /// The value `json_extract` returns for `value`, for comparisons against json1 indexes.
    static func json1Value(_ value: JSONValue) -> DatabaseValue {
        switch value {
        case .string(let string): return string.databaseValue
        case .integer(let number): return number.databaseValue
        case .double(let number): return number.databaseValue
        case .bool(let bool): return (bool ? 1 : 0 as Int64).databaseValue
        case .null: return .null
        case .array, .object: return value.jsonString.databaseValue
        }
    }

    private func writeFullText(id: Int64, entry: JSONValue, replacing: Bool) throws {
        if fullText == nil {
            let indexes = zip(table.spec.indexes, table.columns).filter { $0.0.type == .fullText }
            let columns = ["rowid"] + indexes.map { $0.1! }
            fullText = (
                paths: indexes.map(\.0.path),
                delete: try RawStatement(db, sql: "DELETE FROM \(table.ftsTableName) WHERE rowid = ?"),
                insert: try RawStatement(db, sql: """
                    INSERT INTO \(table.ftsTableName) (\(columns.joined(separator: ", "))) \
                    VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                    """))
        }
        let (paths, delete, insert) = fullText!
        if replacing {
            delete.bind(id, at: 1)
            try delete.execute()
        }
        insert.bind(id, at: 1)
        for (offset, path) in paths.enumerated() {
            insert.bind(SoupTable.columnValue(entry.value(atPath: path), type: .fullText), at: Int32(offset + 2))
        }
        try insert.execute()
    }
}
