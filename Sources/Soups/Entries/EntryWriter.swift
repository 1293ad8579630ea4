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
    /// The same, also writing what the org confirmed (`_confirmed`), prepared when first needed.
    private var confirmingInsert: RawStatement?
    /// Reads an existing entry's `_local`, `_syncId` and index columns, for an update whose
    /// previous values are not known.
    private let readColumns: RawStatement
    /// The columns the last update whose previous values were not known changed (a bit each).
    private var lastChanged: UInt64?
    /// The UPDATEs prepared so far, by the columns they name besides the JSON and its date.
    private var updates: [UpdateShape: RawStatement] = [:]
    /// `_local`, `_syncId`, then the index columns: the order of ``PreparedEntry/columnValues``.
    private let optionalColumns: [String]
    /// The positions in `optionalColumns` of full-text index columns.
    private let fullTextColumns: [Int]
    private var findByExternalId: (path: String, statement: RawStatement)?
    /// Finds a merged entry's match by its key column, prepared when first needed.
    private var matchByKey: (column: String, statement: RawStatement)?
    /// The statements that replace an entry's row of the full-text table, prepared when first needed.
    private var fullText: (delete: RawStatement, insert: RawStatement)?
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
        let indexColumns = zip(table.spec.indexes, table.columns).compactMap { index, column in column.map { (index.type, $0) } }
        optionalColumns = ["_local", "_syncId"] + indexColumns.map(\.1)
        fullTextColumns = indexColumns.indices.filter { indexColumns[$0].0 == .fullText }.map { $0 + 2 }
        insert = try Self.insert(table: table, confirming: false, db: db)
        readColumns = try RawStatement(db, sql: "SELECT \(optionalColumns.joined(separator: ", ")) FROM \(table.tableName) WHERE id = ?")
        now = Int64(Date().timeIntervalSince1970 * 1000)
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table.tableName]) ?? 0
        let maxId = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM \(table.tableName)") ?? 0
        nextId = max(sequence, maxId) + 1
    }

    /// The INSERT of an entry: its JSON, dates, sync columns and index columns, and with
    /// `confirming` its `_confirmed` values too.
    private static func insert(table: SoupTable, confirming: Bool, db: Database) throws -> RawStatement {
        let columns = ["id", "created", "soup", "lastModified", "_local", "_syncId"] + table.columns.compactMap { $0 }
            + (confirming ? ["_confirmed"] : [])
        return try RawStatement(db, sql: """
            INSERT INTO \(table.tableName) (\(columns.joined(separator: ", ")))
            VALUES (\(SoupStore.placeholders(columns.count)))
            """)
    }

    /// The columns an UPDATE names besides the entry's JSON and its date. SQLite rewrites the
    /// entries of every index over a column the SET names, changed or not (~0.5 µs an index), so
    /// an update names only the columns that change — told by the entry's previous values when
    /// its caller knows them, else as the entry before it, else read first — and its WHERE asks
    /// the others to hold their values still: should one not (a wrong guess, an entry changed
    /// since its caller read it), nothing is written and the entry is written again.
    private struct UpdateShape: Hashable {
        /// A bit for each of `optionalColumns` named (the others are checked); `nil`: all named.
        var named: UInt64?
        /// Whether `_confirmed` is named.
        var confirming: Bool

        func names(_ offset: Int) -> Bool {
            named.map { $0 & (1 << UInt64(offset)) != 0 } ?? true
        }
    }

    /// The UPDATE of `shape`, prepared when first needed.
    private func update(_ shape: UpdateShape) throws -> RawStatement {
        if let statement = updates[shape] { return statement }
        // Entries of one write change alike; should they not, the statements kept stay few.
        if updates.count >= 32 { updates.removeAll() }
        let set = ["soup", "lastModified"] + optionalColumns.indices.filter(shape.names).map { optionalColumns[$0] }
            + (shape.confirming ? ["_confirmed"] : [])
        let kept = optionalColumns.indices.filter { !shape.names($0) }.map { "\(optionalColumns[$0]) IS ?" }
        let statement = try RawStatement(db, sql: """
            UPDATE \(table.tableName) SET \(set.map { "\($0) = ?" }.joined(separator: ", ")) \
            WHERE \((["id = ?"] + kept).joined(separator: " AND "))
            """)
        updates[shape] = statement
        return statement
    }

    /// Updates the entry `id` as `shape` says; returns whether it was found (and written).
    private func update(_ prepared: PreparedEntry, id: Int64, shape: UpdateShape) throws -> Bool {
        let statement = try update(shape)
        statement.bind(now, at: 2)
        var parameter: Int32 = 2
        for (offset, value) in prepared.columnValues.enumerated() where shape.names(offset) {
            parameter += 1
            statement.bind(value, at: parameter)
        }
        var confirmed: (text: [UInt8], index: Int32)?
        if let confirmedText = prepared.confirmed {
            parameter += 1
            confirmed = (confirmedText, parameter)
        }
        parameter += 1
        statement.bind(id, at: parameter)
        for (offset, value) in prepared.columnValues.enumerated() where !shape.names(offset) {
            parameter += 1
            statement.bind(value, at: parameter)
        }
        try statement.execute(bindingText: text, at: 1, and: confirmed)
        return statement.changes > 0
    }

    /// The stored entry `id`'s `_local`, `_syncId` and index columns; `nil` when there is no such entry.
    private func storedColumns(_ id: Int64) throws -> [DatabaseValue]? {
        var values: [DatabaseValue]?
        readColumns.bind(id, at: 1)
        try readColumns.forEachRow { row in values = optionalColumns.indices.map { row.value(Int32($0)) } }
        return values
    }

    /// Which of an entry's column values differ from `previous` (a bit each), `nil` when there
    /// are too many to tell apart. Only the same storage class and value count as the same: what
    /// writing the value again would store.
    private static func changes(from previous: [DatabaseValue], to values: [DatabaseValue]) -> UInt64? {
        guard previous.count == values.count, values.count <= 64 else { return nil }
        var changed: UInt64 = 0
        for offset in values.indices where !values[offset].isStored(as: previous[offset]) { changed |= 1 << UInt64(offset) }
        return changed
    }

    /// Stores one entry and returns its `_soupEntryId`; see ``SoupStore/upsert(_:into:externalIdPath:)``.
    func write(_ prepared: PreparedEntry, externalIdPath: String) throws -> Int64 {
        try write(prepared, over: try existingId(of: try prepared.object(), externalIdPath: externalIdPath),
                  changed: prepared.previousColumnValues.flatMap { Self.changes(from: $0, to: prepared.columnValues) })
    }

    /// What ``merge(_:key:column:)`` did with an entry.
    enum MergeOutcome {
        case created, updated, unchanged
    }

    /// Stores an entry of a ``SoupMerge`` over the oldest entry whose index column `column` holds
    /// `key`, or as a new entry when there is none (`key` `nil`: known to be new); leaves the
    /// entry found as it is when it stores the same (``JSONObject/storesSameSync(as:)``).
    func merge(_ prepared: PreparedEntry, key: DatabaseValue?, column: String) throws -> MergeOutcome {
        guard let key, let found = try match(key, column: column, for: prepared) else {
            _ = try write(prepared, over: nil, changed: nil)
            return .created
        }
        if found.same { return .unchanged }
        _ = try write(prepared, over: found.id, changed: found.changed)
        return .updated
    }

    /// The oldest entry whose index column `column` holds `key`: its `_soupEntryId`, which of
    /// `prepared`'s column values it does not hold (a bit each, read in place), and whether
    /// `prepared` would store the same over it.
    private func match(_ key: DatabaseValue, column: String, for prepared: PreparedEntry)
        throws -> (id: Int64, changed: UInt64?, same: Bool)?
    {
        let statement: RawStatement
        if let cached = matchByKey, cached.column == column {
            statement = cached.statement
        } else {
            statement = try RawStatement(db, sql: """
                SELECT id, soup, \(optionalColumns.joined(separator: ", ")) FROM \(table.tableName) \
                WHERE \(column) = ? ORDER BY id LIMIT 1
                """)
            matchByKey = (column, statement)
        }
        statement.bind(key, at: 1)
        var found: (Int64, UInt64?, Bool)?
        let values = prepared.columnValues
        try statement.forEachRow { row in
            var changed: UInt64?
            if values.count <= 64 {
                var bits: UInt64 = 0
                for offset in values.indices where !row.holds(values[offset], at: Int32(offset + 2)) { bits |= 1 << UInt64(offset) }
                changed = bits
            }
            // `_local` and `_syncId` come first: only a clean entry of the same sync may be the same.
            let candidate = values[0] == (0 as Int64).databaseValue && row.holds(values[0], at: 2) && row.holds(values[1], at: 3)
            found = (row.int64(0), changed, try candidate && Self.storesSame(row.text(1), as: prepared))
        }
        return found
    }

    /// Whether the stored JSON `soup` of a clean entry of the same sync holds what `prepared`
    /// would store: at once when its text is the prepared text followed by the two fields the
    /// store appends, else by comparing its data fields.
    private static func storesSame(_ soup: UnsafeBufferPointer<UInt8>, as prepared: PreparedEntry) throws -> Bool {
        let body = prepared.json.count - 1
        if soup.count > body, soup[..<body].elementsEqual(prepared.json[..<body]), PreparedEntry.isStoreFieldsTail(soup[body...], after: body > 1) {
            return true
        }
        return try SoupStore.decodeEntry(soup).storesSameSync(as: try prepared.object())
    }

    /// Stores one entry over the entry `existingId` — of whose `_local`, `_syncId` and index
    /// columns `changed` tells, when known, which the entry changes (a bit each) — or as a new
    /// entry; returns its `_soupEntryId`.
    private func write(_ prepared: PreparedEntry, over existingId: Int64?, changed: UInt64?) throws -> Int64 {
        let id: Int64
        if let existingId {
            id = existingId
        } else {
            id = nextId
            nextId += 1
        }
        prepared.writeStoredJSON(id: id, modified: now, into: &text)
        // The columns the write named (a bit each); `nil`: all of them, or an insert.
        var named: UInt64?
        if let existingId {
            let confirming = prepared.confirmed != nil
            // Which columns change: told by `changed` (from the entry's previous values), else
            // guessed to be those the last such entry changed (the entries of one write are
            // alike), else read. A wrong guess writes nothing (its WHERE fails); then the entry
            // is written naming all.
            if let guess = changed ?? lastChanged, try update(prepared, id: existingId, shape: UpdateShape(named: guess, confirming: confirming)) {
                named = guess
            } else if changed == nil, let stored = try storedColumns(existingId), let read = Self.changes(from: stored, to: prepared.columnValues),
                      try update(prepared, id: existingId, shape: UpdateShape(named: read, confirming: confirming)) {
                lastChanged = read
                named = read
            } else if try !update(prepared, id: existingId, shape: UpdateShape(named: nil, confirming: confirming)) {
                // An entry written by its `_soupEntryId` must exist: an update that changed nothing did not.
                throw SoupStoreError.unknownEntry(soup: table.spec.name, id: id)
            }
        } else {
            let statement: RawStatement
            if prepared.confirmed != nil {
                if confirmingInsert == nil { confirmingInsert = try Self.insert(table: table, confirming: true, db: db) }
                statement = confirmingInsert!
            } else {
                statement = insert
            }
            statement.bind(id, at: 1)
            statement.bind(now, at: 2)
            statement.bind(now, at: 4)
            for (offset, value) in prepared.columnValues.enumerated() { statement.bind(value, at: Int32(offset + 5)) }
            try statement.execute(bindingText: text, at: 3, and: prepared.confirmed.map { ($0, Int32(prepared.columnValues.count + 5)) })
        }
        // The full-text table follows its columns: untouched when none was written.
        let fullTextWritten = fullTextColumns.contains { offset in named.map { $0 & (1 << UInt64(offset)) != 0 } ?? true }
        if table.hasFullText && fullTextWritten {
            try writeFullText(id: id, values: fullTextColumns.map { prepared.columnValues[$0] }, replacing: existingId != nil)
        }
        for (filter, valueIndex) in filters where filter.insert(prepared.columnValues[valueIndex + 2]) {
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

    /// Replaces the entry's row of the full-text table with `values`, the entry's full-text
    /// column values in the order of the soup's indexes.
    private func writeFullText(id: Int64, values: [DatabaseValue], replacing: Bool) throws {
        if fullText == nil {
            let indexes = zip(table.spec.indexes, table.columns).filter { $0.0.type == .fullText }
            let columns = ["rowid"] + indexes.map { $0.1! }
            fullText = (
                delete: try RawStatement(db, sql: "DELETE FROM \(table.ftsTableName) WHERE rowid = ?"),
                insert: try RawStatement(db, sql: """
                    INSERT INTO \(table.ftsTableName) (\(columns.joined(separator: ", "))) \
                    VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
                    """))
        }
        let (delete, insert) = fullText!
        if replacing {
            delete.bind(id, at: 1)
            try delete.execute()
        }
        insert.bind(id, at: 1)
        for (offset, value) in values.enumerated() { insert.bind(value, at: Int32(offset + 2)) }
        try insert.execute()
    }
}

private extension DatabaseValue {
    /// Whether both hold the same storage class and value (GRDB's `==` holds 1 and 1.0 equal).
    func isStored(as other: DatabaseValue) -> Bool {
        switch (storage, other.storage) {
        case (.null, .null): return true
        case let (.int64(a), .int64(b)): return a == b
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern
        case let (.string(a), .string(b)): return a == b
        case let (.blob(a), .blob(b)): return a == b
        default: return false
        }
    }
}
