import Foundation
import GRDB
import JSON

extension SoupStore {
    /// Inserts or updates entries in one transaction and returns them as stored (with
    /// `_soupEntryId` and `_soupLastModifiedDate`).
    ///
    /// An entry with `_soupEntryId` updates that entry. Otherwise, with `externalIdPath` other than
    /// `_soupEntryId`, the entry whose indexed `externalIdPath` equals the entry's value is updated
    /// (none: a new entry; several: an error). Sync flags are normalized to JSON booleans.
    ///
    /// The entries' JSON and index values are computed before the write transaction starts, so
    /// the store's single writer spends its time in SQLite only.
    @discardableResult
    public func upsert(
        _ entries: [JSONObject], into soupName: String, externalIdPath: String = SyncField.soupEntryId
    ) async throws -> [JSONObject] {
        let table = try await pool.read { db in try SoupTable.load(db, soupName: soupName) }
        let prepared = try await entries.concurrentMap { PreparedEntry($0, table: table) }
        let (ids, modified) = try await pool.write { db in
            try Self.write(prepared, into: soupName, externalIdPath: externalIdPath, expecting: table, db)
        }
        // The stored entries are assembled after the transaction, off the store's writer.
        return zip(prepared, ids).map { entry, id in entry.stored(id: id, modified: modified) }
    }

    static func upsert(
        _ entries: [JSONObject], into soupName: String, externalIdPath: String, _ db: Database
    ) throws -> [JSONObject] {
        let table = try SoupTable.load(db, soupName: soupName)
        let prepared = entries.map { PreparedEntry($0, table: table) }
        let (ids, modified) = try write(prepared, into: soupName, externalIdPath: externalIdPath, expecting: table, db)
        return zip(prepared, ids).map { entry, id in entry.stored(id: id, modified: modified) }
    }

    /// Writes prepared entries (preparing them again if the soup's indexes changed meanwhile);
    /// returns their `_soupEntryId`s and the `_soupLastModifiedDate` they were given.
    static func write(
        _ entries: [PreparedEntry], into soupName: String, externalIdPath: String, expecting prepared: SoupTable, _ db: Database
    ) throws -> (ids: [Int64], modified: Int64) {
        let table = try SoupTable.load(db, soupName: soupName)
        if externalIdPath != SyncField.soupEntryId && table.spec.index(forPath: externalIdPath) == nil {
            throw SoupStoreError.notIndexed(soup: soupName, path: externalIdPath)
        }
        let current = table.spec == prepared.spec ? entries : entries.map { PreparedEntry($0.entry, table: table) }
        let writer = try EntryWriter(table: table, db: db)
        var ids: [Int64] = []
        ids.reserveCapacity(entries.count)
        for entry in current {
            ids.append(try writer.write(entry, externalIdPath: externalIdPath))
        }
        return (ids, writer.now)
    }
}

/// An entry made ready to write: flags normalized, its JSON text without the two fields the store
/// sets (`_soupEntryId`, `_soupLastModifiedDate`, appended when written), and its index values.
struct PreparedEntry: Sendable {
    var entry: JSONObject
    var json: [UInt8]
    var indexValues: [DatabaseValue]
    var local: Bool
    var syncId: Int64?

    init(_ input: JSONObject, table: SoupTable) {
        var entry = input
        entry.normalizeSyncFlags()
        self.entry = entry
        var body = entry
        body[SyncField.soupEntryId] = nil
        body[SyncField.soupLastModifiedDate] = nil
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        JSONValue.object(body).write(into: &bytes)
        json = bytes
        let wrapped = JSONValue.object(entry)
        indexValues = zip(table.spec.indexes, table.columns).compactMap { index, column in
            guard column != nil else { return nil }
            let value = index.path.contains(".") ? wrapped.value(atPath: index.path) : entry[index.path]
            return SoupTable.columnValue(value, type: index.type)
        }
        local = entry.isDirty
        syncId = entry[SyncField.syncId]?.integerValue
    }

    /// The entry as stored: with its `_soupEntryId` and `_soupLastModifiedDate`.
    func stored(id: Int64, modified: Int64) -> JSONObject {
        var stored = entry
        stored.reserveCapacity(stored.count + 2)
        stored[SyncField.soupEntryId] = .integer(id)
        stored[SyncField.soupLastModifiedDate] = .integer(modified)
        return stored
    }

    /// The stored JSON: the body with `_soupEntryId` and `_soupLastModifiedDate` appended.
    func storedJSON(id: Int64, modified: Int64) -> String {
        var bytes = json
        bytes.removeLast()
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(contentsOf: "\"\(SyncField.soupEntryId)\":\(id),\"\(SyncField.soupLastModifiedDate)\":\(modified)}".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Writes entries of one soup inside one transaction, reusing its prepared statements.
final class EntryWriter {
    let table: SoupTable
    let db: Database
    let insert: Statement
    let update: Statement
    let now: Int64
    private var nextId: Int64

    init(table: SoupTable, db: Database) throws {
        self.table = table
        self.db = db
        let indexColumns = table.columns.compactMap { $0 }
        let insertColumns = ["id", "soup", "created", "lastModified", "_local", "_syncId"] + indexColumns
        insert = try db.cachedStatement(sql: """
            INSERT INTO \(table.tableName) (\(insertColumns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")))
            """)
        let updateColumns = ["soup", "lastModified", "_local", "_syncId"] + indexColumns
        update = try db.cachedStatement(sql: """
            UPDATE \(table.tableName) SET \(updateColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?
            """)
        now = Int64(Date().timeIntervalSince1970 * 1000)
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table.tableName]) ?? 0
        let maxId = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM \(table.tableName)") ?? 0
        nextId = max(sequence, maxId) + 1
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
        let soupText = prepared.storedJSON(id: id, modified: now).databaseValue
        let local = (prepared.local ? 1 : 0 as Int64).databaseValue
        let syncId = prepared.syncId?.databaseValue ?? .null
        // Arguments as existentials: GRDB's generic `StatementArguments` initializer is not
        // specialized across modules and costs a key path per value.
        var arguments: [(any DatabaseValueConvertible)?] = []
        arguments.reserveCapacity(7 + prepared.indexValues.count)
        if existingId != nil {
            arguments += [soupText, now, local, syncId]
            arguments += prepared.indexValues.map { $0 as any DatabaseValueConvertible }
            arguments.append(id)
            update.setUncheckedArguments(StatementArguments(arguments))
            try update.execute()
        } else {
            arguments += [id, soupText, now, now, local, syncId]
            arguments += prepared.indexValues.map { $0 as any DatabaseValueConvertible }
            insert.setUncheckedArguments(StatementArguments(arguments))
            try insert.execute()
        }
        if table.hasFullText { try writeFullText(id: id, entry: .object(prepared.entry), replacing: existingId != nil) }
        return id
    }

    private func existingId(of entry: JSONObject, externalIdPath: String) throws -> Int64? {
        if let id = entry.soupEntryId {
            guard try Bool.fetchOne(db, sql: "SELECT COUNT(*) > 0 FROM \(table.tableName) WHERE id = ?", arguments: [id]) == true else {
                throw SoupStoreError.unknownEntry(soup: table.spec.name, id: id)
            }
            return id
        }
        guard externalIdPath != SyncField.soupEntryId else { return nil }
        let value = JSONValue.object(entry).value(atPath: externalIdPath)
        guard let value, !value.isNull, value != .string("") else {
            throw SoupStoreError.emptyExternalId(soup: table.spec.name, path: externalIdPath)
        }
        let type = table.indexType(forPath: externalIdPath) ?? .json1
        let key = type == .json1 ? Self.json1Value(value) : SoupTable.columnValue(value, type: type)
        let ids = try Int64.fetchAll(
            db, sql: "SELECT id FROM \(table.tableName) WHERE \(table.expression(forPath: externalIdPath)) = ? LIMIT 2",
            arguments: [key])
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
        let fullText = zip(table.spec.indexes, table.columns).filter { $0.0.type == .fullText }
        if replacing {
            try db.execute(sql: "DELETE FROM \(table.ftsTableName) WHERE rowid = ?", arguments: [id])
        }
        let columns = fullText.map { $0.1! }
        let values = [id.databaseValue] + fullText.map { SoupTable.columnValue(entry.value(atPath: $0.0.path), type: .fullText) }
        try db.execute(
            sql: "INSERT INTO \(table.ftsTableName) (rowid, \(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))",
            arguments: StatementArguments(values))
    }
}
