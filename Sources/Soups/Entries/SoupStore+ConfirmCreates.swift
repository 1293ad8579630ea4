import Foundation
import GRDB
import JSON

extension SoupStore {
    /// An entry whose record the org created: its `_soupEntryId`, its `_soupLastModifiedDate`
    /// when it was read to be sent (it must not have changed since), and the record's new id.
    public struct CreatedRecord: Sendable {
        public var entryId: Int64
        public var lastModified: Int64
        public var id: String

        public init(entryId: Int64, lastModified: Int64, id: String) {
            self.entryId = entryId
            self.lastModified = lastModified
            self.id = id
        }
    }

    /// What ``confirmCreates(_:in:idField:settling:)`` wrote for an entry: its id before (a
    /// `local_` id, or whatever the entry held) and its data fields, as recorded for what the org
    /// confirmed (JSON text).
    public struct ConfirmedCreate: Sendable {
        public var entryId: Int64
        public var previousId: String?
        public var confirmed: [UInt8]
    }

    /// Members outside an entry's data fields that ``confirmCreates(_:in:idField:settling:)``
    /// knows how to leave out of what the org confirmed.
    static let knownSyncMembers: [String] = ["attributes", SyncField.soupEntryId, SyncField.soupLastModifiedDate, SyncField.soupCreatedDate,
                                             SyncField.local, SyncField.locallyCreated, SyncField.locallyUpdated, SyncField.locallyDeleted,
                                             SyncField.lastError, SyncField.syncId]

    /// Whether ``confirmCreates(_:in:idField:settling:)`` may write `entry`: every member outside
    /// its data fields is one the store knows, and `idField` is a plain top-level name.
    public static func canConfirmCreate(of entry: JSONObject, idField: String) -> Bool {
        idField.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
            && !idField.isEmpty && !knownSyncMembers.contains(idField)
            && entry.keys.allSatisfy { JSONObject.isDataField($0) || knownSyncMembers.contains($0) }
    }

    /// Writes the records the org created into their entries, as reading each entry, setting
    /// `idField` to the new id, clearing the sync flags (`__last_error__` null), recording its
    /// data fields as what the org confirmed and writing it back would — in SQL, without reading
    /// the entries into memory — and removes `journalIds` from the sync journal, in one
    /// transaction. Each entry must pass ``canConfirmCreate(of:idField:)``.
    ///
    /// Returns what was written, in the order given; `nil`, with nothing changed, when an entry
    /// changed (or went) since it was read, or when the soup indexes the id field or a flag for
    /// full-text search or below a nested path.
    public func confirmCreates(_ records: [CreatedRecord], in soupName: String, idField: String,
                               settling journalIds: [Int64]) async throws -> [ConfirmedCreate]? {
        struct Changed: Error {}
        do {
            return try await pool.write { db in
                let table = try SoupTable.load(db, soupName: soupName)
                let t = table.tableName
                let changedMembers = Set([idField, SyncField.lastError, SyncField.soupEntryId, SyncField.soupLastModifiedDate] + SyncField.flags)
                // Index columns the write changes: the id's (bound per entry), the flags' and
                // `__last_error__`'s (the same for every entry).
                var idColumn: (name: String, type: IndexType)?
                var fixedColumns: [(name: String, value: DatabaseValue)] = []
                for (index, column) in zip(table.spec.indexes, table.columns) {
                    let member = String(index.path.split(separator: ".", maxSplits: 1).first ?? "")
                    guard changedMembers.contains(member) else { continue }
                    guard index.type != .fullText, member == index.path else { return nil }
                    guard let column else { continue }
                    if index.path == idField {
                        idColumn = (column, index.type)
                    } else if SyncField.flags.contains(index.path) {
                        fixedColumns.append((column, SoupTable.columnValue(.bool(false), type: index.type)))
                    } else if index.path == SyncField.lastError {
                        fixedColumns.append((column, .null))
                    }
                }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let idPath = SoupTable.jsonPath(idField)
                var previous: [Int64: String] = [:]
                for chunk in records.chunked(into: 500) {
                    let select = try RawStatement(db, sql: """
                        SELECT id, json_extract(soup, '\(idPath)') FROM \(t) WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))
                        """)
                    for (offset, record) in chunk.enumerated() { select.bind(record.entryId, at: Int32(offset + 1)) }
                    try select.forEachRow { id, text in previous[id] = String(decoding: text, as: UTF8.self) }
                }
                let flags = SyncField.flags.map { "'\(SoupTable.jsonPath($0))', json('false')" }.joined(separator: ", ")
                let dataFieldsOnly = Self.knownSyncMembers.map { "'\(SoupTable.jsonPath($0))'" }.joined(separator: ", ")
                let sets = [
                    """
                    soup = json_set(json_remove(soup, '$.\(SyncField.soupEntryId)', '$.\(SyncField.soupLastModifiedDate)'), \
                    '\(idPath)', ?1, \(flags), '$.\(SyncField.lastError)', NULL, '$.\(SyncField.soupEntryId)', id, \
                    '$.\(SyncField.soupLastModifiedDate)', ?2)
                    """,
                    "_confirmed = json_set(json_remove(soup, \(dataFieldsOnly)), '\(idPath)', ?1)",
                    "lastModified = ?2", "_local = 0",
                ] + (idColumn.map { ["\($0.name) = ?5"] } ?? []) + fixedColumns.enumerated().map { "\($1.name) = ?\($0 + 6)" }
                let update = try RawStatement(db, sql: "UPDATE \(t) SET \(sets.joined(separator: ", ")) WHERE id = ?3 AND lastModified = ?4 RETURNING id, _confirmed")
                for (offset, column) in fixedColumns.enumerated() { update.bind(column.value, at: Int32(offset + 6)) }
                // Value filters of the changed columns learn what is written.
                let tracked = self.valueFilters.withLock { $0[soupName] ?? [:] }.filter { $0.value.matches(table, path: $0.key) }
                let idFilter = tracked[idField]
                var full = Set<ObjectIdentifier>()
                var toRebuild: [SoupValueFilter] = []
                func learn(_ value: DatabaseValue, _ filter: SoupValueFilter) {
                    if filter.insert(value), full.insert(ObjectIdentifier(filter)).inserted { toRebuild.append(filter) }
                }
                for (path, filter) in tracked where path != idField {
                    if let column = fixedColumns.first(where: { $0.name == filter.column }) { learn(column.value, filter) }
                }
                var written: [ConfirmedCreate] = []
                written.reserveCapacity(records.count)
                for record in records {
                    update.bind(record.id.databaseValue, at: 1)
                    update.bind(now, at: 2)
                    update.bind(record.entryId, at: 3)
                    update.bind(record.lastModified, at: 4)
                    if let idColumn {
                        let value = SoupTable.columnValue(.string(record.id), type: idColumn.type)
                        update.bind(value, at: 5)
                        if let idFilter { learn(value, idFilter) }
                    }
                    var confirmed: [UInt8]?
                    try update.forEachRow { _, text in confirmed = Array(text) }
                    guard let confirmed else { throw Changed() }
                    written.append(ConfirmedCreate(entryId: record.entryId, previousId: previous[record.entryId], confirmed: confirmed))
                }
                try Self.removeFromJournal(ids: journalIds, db)
                for filter in toRebuild { try filter.rebuild(db) }
                return written
            }
        } catch is Changed {
            return nil
        }
    }
}
