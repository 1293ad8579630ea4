import GRDB
import JSON

extension SoupStore {
    /// One page (0-based) of the entries a query selects.
    public func query(_ spec: QuerySpec, page: Int = 0) async throws -> [JSONObject] {
        try await pool.read { db in
            let table = try SoupTable.load(db, soupName: spec.soupName)
            let (condition, arguments) = try Self.condition(for: spec.kind, table: table)
            let direction = spec.order == .ascending ? "ASC" : "DESC"
            let sql = """
                SELECT soup FROM \(table.tableName) \(condition.isEmpty ? "" : "WHERE " + condition)
                ORDER BY \(table.expression(forPath: spec.orderPath)) \(direction), id \(direction)
                LIMIT \(spec.pageSize) OFFSET \(page * spec.pageSize)
                """
            return try String.fetchAll(db, sql: sql, arguments: arguments).map(Self.decodeEntry)
        }
    }

    /// The number of entries a query selects.
    public func count(_ spec: QuerySpec) async throws -> Int {
        try await pool.read { db in
            let table = try SoupTable.load(db, soupName: spec.soupName)
            let (condition, arguments) = try Self.condition(for: spec.kind, table: table)
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM \(table.tableName) \(condition.isEmpty ? "" : "WHERE " + condition)",
                arguments: arguments) ?? 0
        }
    }

    /// Entries by `_soupEntryId`, in the order asked; missing ids are skipped.
    public func retrieve(ids: [Int64], from soupName: String) async throws -> [JSONObject] {
        // The bytes are copied out of the read and parsed after it: many entries (a page of
        // trees, a Bulk save) on every core, as `concurrentMap` decides.
        let texts = try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            var texts: [Int64: [UInt8]] = [:]
            texts.reserveCapacity(ids.count)
            var statement = ChunkStatement { "SELECT id, soup FROM \(table.tableName) WHERE id IN (\(Self.placeholders($0)))" }
            for chunk in ids.chunked(into: 500) {
                let raw = try statement.statement(db, size: chunk.count)
                for (offset, id) in chunk.enumerated() { raw.bind(id, at: Int32(offset + 1)) }
                try raw.forEachRow { row in texts[row.int64(0)] = row.bytes(1) }
            }
            return texts
        }
        return try await ids.compactMap { texts[$0] }.concurrentMap { try Self.decodeEntry($0) }
    }

    /// Dirty entries (`__local__` true, however it was written) in numeric `_soupEntryId` order,
    /// `limit` at a time after `afterId`, so callers can walk any number of them in constant memory.
    public func dirtyEntries(in soupName: String, afterId: Int64 = 0, limit: Int = 1000) async throws -> [JSONObject] {
        try await dirtyTexts(in: soupName, afterId: afterId, limit: limit).map(Self.decodeEntry)
    }

    /// ``dirtyEntries(in:afterId:limit:)`` with only the members named in `keys` (and
    /// `_soupEntryId`): the others are stepped over, not built — for walking many entries for a field
    /// or two.
    public func dirtyEntries(in soupName: String, afterId: Int64 = 0, limit: Int = 1000, keeping keys: Set<String>) async throws -> [JSONObject] {
        try Self.decodeEntries(try await dirtyTexts(in: soupName, afterId: afterId, limit: limit), keeping: keys)
    }

    /// The stored JSON of the dirty entries after `afterId`, in id order.
    private func dirtyTexts(in soupName: String, afterId: Int64, limit: Int) async throws -> [[UInt8]] {
        try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            return try Self.entryTexts(
                db, sql: "SELECT id, soup FROM \(table.tableName) WHERE _local = 1 AND id > ? ORDER BY id LIMIT ?",
                arguments: [afterId, Int64(limit)])
        }
    }

    /// The `_soupEntryId`s of every dirty entry, in numeric order, read from the dirty index alone.
    public func dirtyEntryIds(in soupName: String) async throws -> [Int64] {
        try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            return try Int64.fetchAll(db, sql: "SELECT id FROM \(table.tableName) WHERE _local = 1 ORDER BY id")
        }
    }

    /// Entries in `_soupEntryId` order, a page of `limit` after `afterId`; `syncId` narrows to the
    /// entries a given sync wrote. With `keeping`, each entry holds only those members (and
    /// `_soupEntryId`): the others are stepped over, not built.
    public func entries(in soupName: String, afterId: Int64 = 0, limit: Int = 1000, syncId: Int64? = nil,
                        keeping keys: Set<String>? = nil) async throws -> [JSONObject] {
        let texts = try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            let filter = syncId == nil ? "" : "AND _syncId = \(syncId!)"
            return try Self.entryTexts(
                db, sql: "SELECT id, soup FROM \(table.tableName) WHERE id > ? \(filter) ORDER BY id LIMIT ?",
                arguments: [afterId, Int64(limit)])
        }
        guard let keys else {
            // Parsed after the read, on every core.
            return try await texts.concurrentMap(Self.decodeEntry)
        }
        return try Self.decodeEntries(texts, keeping: keys)
    }

    /// Stored entries with only the members named in `keys` and `_soupEntryId` built.
    static func decodeEntries(_ texts: [[UInt8]], keeping keys: Set<String>) throws -> [JSONObject] {
        let names = JSONParser.MemberNames(keys.union([SyncField.soupEntryId]))
        return try texts.map { try JSONParser.parseObject($0, keeping: names) }
    }

    /// Entry counts of a soup: all, dirty, and failed (dirty with a `__last_error__`).
    public func counts(of soupName: String) async throws -> SoupCounts {
        try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS total, COALESCE(SUM(_local), 0) AS dirty,
                  COALESCE(SUM(CASE WHEN _local = 1 AND json_type(soup, '$.__last_error__') NOT IN ('null')
                                     AND json_extract(soup, '$.__last_error__') IS NOT NULL THEN 1 ELSE 0 END), 0) AS failed
                FROM \(table.tableName)
                """)!
            return SoupCounts(total: row["total"], dirty: row["dirty"], failed: row["failed"])
        }
    }

    /// The stored JSON of the entries `sql` selects (as `id, soup`), as SQLite holds it: no string
    /// is built (nor its UTF-8 checked) before the parser reads it.
    static func entryTexts(_ db: Database, sql: String, arguments: [Int64]) throws -> [[UInt8]] {
        let statement = try RawStatement(db, sql: sql)
        for (offset, argument) in arguments.enumerated() { statement.bind(argument, at: Int32(offset + 1)) }
        var texts: [[UInt8]] = []
        try statement.forEachRow { row in texts.append(row.bytes(1)) }
        return texts
    }

    /// `count` SQL parameters, comma-separated.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ",")
    }

    static func decodeEntry(_ text: String) throws -> JSONObject {
        try decodeEntry(text.utf8)
    }

    /// ``decodeEntry(_:)`` from UTF-8 bytes.
    static func decodeEntry<Bytes: Collection<UInt8>>(_ text: Bytes) throws -> JSONObject {
        guard let object = try JSONParser.parse(text).value.objectValue else {
            throw SoupStoreError.invalidSmartSQL("stored entry is not an object")
        }
        return object
    }

    static func condition(for kind: QuerySpec.Kind, table: SoupTable) throws -> (String, StatementArguments) {
        switch kind {
        case .all:
            return ("", [])
        case .exact(let path, let key):
            return ("\(table.expression(forPath: path)) = ?", [comparable(key, path: path, table: table)])
        case .range(let path, let begin, let end):
            var parts: [String] = []
            var arguments: [DatabaseValue] = []
            if let begin { parts.append("\(table.expression(forPath: path)) >= ?"); arguments.append(comparable(begin, path: path, table: table)) }
            if let end { parts.append("\(table.expression(forPath: path)) <= ?"); arguments.append(comparable(end, path: path, table: table)) }
            return (parts.joined(separator: " AND "), StatementArguments(arguments))
        case .like(let path, let pattern):
            return ("\(table.expression(forPath: path)) LIKE ?", [pattern])
        case .match(let path, let key):
            guard table.hasFullText else { throw SoupStoreError.notIndexed(soup: table.spec.name, path: path ?? "full_text") }
            var query = key
            if let path {
                guard table.indexType(forPath: path) == .fullText,
                      let offset = table.spec.indexes.firstIndex(where: { $0.path == path }), let column = table.columns[offset]
                else { throw SoupStoreError.notIndexed(soup: table.spec.name, path: path) }
                query = "{\(column)} : (\(key))"
            }
            return ("id IN (SELECT rowid FROM \(table.ftsTableName) WHERE \(table.ftsTableName) MATCH ?)", [query])
        }
    }

    /// Converts a match key to what the path's column holds, so `true`, `"true"` and `1` all match
    /// a flag however it is indexed.
    static func comparable(_ key: JSONValue, path: String, table: SoupTable) -> DatabaseValue {
        comparable(key, path: path, type: table.indexType(forPath: path))
    }

    /// ``comparable(_:path:table:)`` for a path indexed with `type` (`nil`: not indexed).
    static func comparable(_ key: JSONValue, path: String, type: IndexType?) -> DatabaseValue {
        if SyncField.flags.contains(path) {
            let truthy = key.isTruthy
            if type == .string || type == .fullText { return (truthy ? "true" : "false").databaseValue }
            return (truthy ? 1 : 0 as Int64).databaseValue
        }
        switch path {
        case SyncField.soupEntryId, SyncField.soupLastModifiedDate, SyncField.soupCreatedDate:
            return SoupTable.columnValue(key, type: .integer)
        default:
            guard let type, type != .json1 else { return EntryWriter.json1Value(key) }
            return SoupTable.columnValue(key, type: type)
        }
    }
}

/// How many entries a soup holds.
public struct SoupCounts: Sendable, Equatable {
    public var total: Int
    public var dirty: Int
    public var failed: Int
}


extension SoupStore {
    /// The entries whose `path` equals one of `values` (compared as the path's index stores them),
    /// grouped by that value — one query per 500 values, for matching a batch of records at once.
    public func entries(in soupName: String, where path: String, in values: [JSONValue]) async throws -> [JSONValue: [JSONObject]] {
        try await entries(in: soupName, where: path, in: values) { _, _, _ in true }
    }

    /// ``entries(in:where:in:)`` for a sync down about to store over them: an entry the sync may
    /// find unchanged — clean, and last written by sync `syncId` — comes whole; any other comes as
    /// its `_soupEntryId`, `__local__` and `__sync_id__` only (its JSON is not even parsed), which
    /// is all a sync down needs to overwrite it, or to leave it alone when it is dirty.
    public func entriesToSyncOver(in soupName: String, where path: String, in values: [JSONValue], syncId: Int64)
        async throws -> [JSONValue: [JSONObject]]
    {
        try await entries(in: soupName, where: path, in: values) { _, dirty, entrySyncId in !dirty && entrySyncId == syncId }
    }

    /// ``entries(in:where:in:)`` for a caller that needs only which entries match: each comes as its
    /// `_soupEntryId`, `__local__` and `__sync_id__` (its JSON is not parsed).
    public func entrySyncColumns(in soupName: String, where path: String, in values: [JSONValue]) async throws -> [JSONValue: [JSONObject]] {
        try await entries(in: soupName, where: path, in: values) { _, _, _ in false }
    }

    /// ``entries(in:where:in:)`` for a caller that already holds some of them: an entry whose
    /// `_soupEntryId` is in `held` comes as its sync columns only (its JSON is not parsed).
    public func entries(in soupName: String, where path: String, in values: [JSONValue], exceptWhole held: Set<Int64>)
        async throws -> [JSONValue: [JSONObject]]
    {
        try await entries(in: soupName, where: path, in: values) { id, _, _ in !held.contains(id) }
    }

    /// ``entries(in:where:in:)`` for a caller that needs one field of each: an entry comes as its
    /// sync columns and `field` (read in SQL; the entry's JSON is not parsed), without `field`
    /// when the entry has none.
    public func entries(in soupName: String, where path: String, in values: [JSONValue], keepingOnly field: String)
        async throws -> [JSONValue: [JSONObject]]
    {
        try await entries(in: soupName, where: path, in: values, field: field) { _, _, _ in false }
    }

    /// The matching entries, whole when `whole(id, dirty, syncId)` says so, else their sync
    /// columns (and `field`, when given).
    private func entries(in soupName: String, where path: String, in values: [JSONValue], field: String? = nil,
                         whole: @escaping @Sendable (_ id: Int64, _ dirty: Bool, _ syncId: Int64?) -> Bool) async throws -> [JSONValue: [JSONObject]] {
        // Values the soup certainly lacks (see `trackValues(in:path:)`) need no query; when that
        // is all of them, the store is not even read.
        if let filter = valueFilter(for: soupName, path: path),
           !values.contains(where: { filter.mightContain(Self.comparable($0, path: path, type: filter.type)) }) {
            return [:]
        }
        struct Match: Sendable {
            var key: DatabaseValue
            var id: Int64
            var dirty: Bool
            var syncId: Int64?
            var soup: [UInt8]?
            /// `field` as JSON text, when asked for and present.
            var field: [UInt8]?
        }
        // The rows are read on a reader; their JSON is parsed after, on every core.
        let (rows, byKey) = try await pool.read { db in
            let table = try SoupTable.load(db, soupName: soupName)
            let keys = values.map { Self.comparable($0, path: path, table: table) }
            let filter = self.valueFilter(for: soupName, path: path).flatMap { $0.matches(table, path: path) ? $0 : nil }
            var byKey: [DatabaseValue: [JSONValue]] = [:]
            byKey.reserveCapacity(values.count)
            for (key, value) in zip(keys, values) where filter?.mightContain(key) ?? true && !(byKey[key]?.contains(value) ?? false) {
                byKey[key, default: []].append(value)
            }
            var rows: [Match] = []
            rows.reserveCapacity(byKey.count)
            let expression = table.expression(forPath: path)
            let fieldColumn = field.map { "soup -> '\(SoupTable.jsonPath($0))'" } ?? "NULL"
            var statement = ChunkStatement {
                "SELECT \(expression) AS k, id, _local, _syncId, soup, \(fieldColumn) FROM \(table.tableName) WHERE \(expression) IN (\(Self.placeholders($0)))"
            }
            for chunk in Array(byKey.keys).chunked(into: 500) {
                let raw = try statement.statement(db, size: chunk.count)
                for (offset, key) in chunk.enumerated() { raw.bind(key, at: Int32(offset + 1)) }
                // Read in place: no GRDB row, and the JSON copied as bytes to be parsed after.
                try raw.forEachRow { row in
                    var match = Match(key: row.value(0), id: row.int64(1), dirty: row.int64(2) != 0, syncId: row.isNull(3) ? nil : row.int64(3))
                    if whole(match.id, match.dirty, match.syncId) { match.soup = row.bytes(4) }
                    if !row.isNull(5) { match.field = row.bytes(5) }
                    rows.append(match)
                }
            }
            return (rows, byKey)
        }
        // Only whole entries are worth parsing on every core; the others are three members.
        let parsed = try await rows.compactMap(\.soup).concurrentMap { try Self.decodeEntry($0) }
        var found: [JSONValue: [JSONObject]] = [:]
        found.reserveCapacity(rows.count)
        var nextParsed = 0
        for row in rows {
            let entry: JSONObject
            if row.soup != nil {
                entry = parsed[nextParsed]
                nextParsed += 1
            } else {
                let id = (SyncField.soupEntryId, JSONValue.integer(row.id)), local = (SyncField.local, JSONValue.bool(row.dirty))
                var stub = JSONObject(uniqueKeysWithValues: row.syncId.map { [id, local, (SyncField.syncId, .integer($0))] } ?? [id, local])
                if let field, let text = row.field { stub[field] = try JSONParser.parse(text).value }
                entry = stub
            }
            for value in byKey[row.key] ?? [] { found[value, default: []].append(entry) }
        }
        return found
    }
}
