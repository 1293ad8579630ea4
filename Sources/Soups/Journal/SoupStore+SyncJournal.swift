import GRDB
import JSON

extension SoupStore {
    /// The sync-up journal: every write recorded before it leaves, until its outcome is known.
    public var journal: SyncJournal { SyncJournal(store: self) }
}

/// The sync-up journal: every write recorded before it leaves, until its outcome is known. Over the store's own database writer.
public struct SyncJournal: Sendable {
    let store: SoupStore
    var pool: DatabasePool { store.pool }

    /// Records writes about to be sent (one transaction); returns their journal ids, in order.
    @discardableResult
    public func append(_ entries: [SyncJournalEntry]) async throws -> [Int64] {
        try await pool.write { db in
            var ids: [Int64] = []
            ids.reserveCapacity(entries.count)
            var statement = ChunkStatement { rows in """
                INSERT INTO sync_journal (syncName, soupName, entryId, operation, objectType, recordId, payload, sentAt,
                                          serverSentAt, settledBy, linkField, linkSoup, linkEntryId, bulkJobId)
                VALUES \(Array(repeating: "(\(SoupStore.placeholders(14)))", count: rows).joined(separator: ", "))
                """ }
            var payload: [UInt8] = []
            for chunk in entries.chunked(into: Self.rowsPerInsert) {
                let raw = try statement.statement(db, size: chunk.count)
                for (position, entry) in chunk.enumerated() {
                    let base = Int32(position * 14)
                    payload.removeAll(keepingCapacity: true)
                    JSONValue.object(entry.payload).write(into: &payload)
                    raw.bind(text: entry.syncName, at: base + 1)
                    raw.bind(text: entry.soupName, at: base + 2)
                    raw.bind(entry.entryId, at: base + 3)
                    raw.bind(text: entry.operation.rawValue, at: base + 4)
                    raw.bind(text: entry.objectType, at: base + 5)
                    raw.bind(optionalText: entry.recordId, at: base + 6)
                    raw.bind(text: payload, at: base + 7)
                    raw.bind(entry.sentAt, at: base + 8)
                    raw.bind(optional: entry.serverSentAt, at: base + 9)
                    raw.bind(optional: entry.settledBy, at: base + 10)
                    raw.bind(optionalText: entry.link?.field, at: base + 11)
                    raw.bind(optionalText: entry.link?.soupName, at: base + 12)
                    raw.bind(optional: entry.link?.entryId, at: base + 13)
                    raw.bind(optionalText: entry.bulkJobId, at: base + 14)
                }
                try raw.execute()
                // One statement's rows take consecutive ids (one writer; AUTOINCREMENT counts up).
                let last = db.lastInsertedRowID
                ids.append(contentsOf: (last - Int64(chunk.count) + 1)...last)
            }
            return ids
        }
    }

    /// Journal entries written by one INSERT (14 values each, well under SQLite's variable limit).
    static let rowsPerInsert = 64

    /// Records the Bulk API job that carries the given journal entries (before its data is uploaded).
    public func setBulkJob(_ jobId: String, forJournalIds ids: [Int64]) async throws {
        try await pool.write { db in
            for chunk in ids.chunked(into: 500) {
                try db.execute(sql: "UPDATE sync_journal SET bulkJobId = ? WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                               arguments: StatementArguments([jobId as any DatabaseValueConvertible] + chunk.map { $0 as any DatabaseValueConvertible }))
            }
        }
    }

    /// Moves journal entries' send time and settle-by deadline to an attempt of their request
    /// leaving later than they were stamped (a retry after a refusal, which applied nothing, or a
    /// first attempt that waited for a connection).
    public func restamp(ids: [Int64], sentAt: Int64, serverSentAt: Int64, settledBy: Int64) async throws {
        try await pool.write { db in
            for chunk in ids.chunked(into: 500) {
                try db.execute(sql: "UPDATE sync_journal SET sentAt = ?, serverSentAt = ?, settledBy = ? WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                               arguments: StatementArguments([sentAt, serverSentAt, settledBy] + chunk))
            }
        }
    }

    /// The writes of a sync still waiting for a confirmed outcome, oldest first.
    public func entries(of syncName: String) async throws -> [SyncJournalEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM sync_journal WHERE syncName = ? ORDER BY id", arguments: [syncName]).map { row in
                let linkField: String? = row["linkField"]
                let linkSoup: String? = row["linkSoup"]
                let linkEntryId: Int64? = row["linkEntryId"]
                return SyncJournalEntry(
                    id: row["id"], syncName: row["syncName"], soupName: row["soupName"], entryId: row["entryId"],
                    operation: SyncJournalEntry.Operation(rawValue: row["operation"]) ?? .update, objectType: row["objectType"],
                    recordId: row["recordId"], payload: try SoupStore.decodeEntry(row["payload"]), sentAt: row["sentAt"],
                    serverSentAt: row["serverSentAt"], settledBy: row["settledBy"],
                    link: linkField.flatMap { field in
                        linkSoup.flatMap { soup in linkEntryId.map { SyncJournalEntry.Link(field: field, soupName: soup, entryId: $0) } }
                    },
                    bulkJobId: row["bulkJobId"])
            }
        }
    }

    /// Forgets journal entries whose outcome is settled.
    public func remove(ids: [Int64]) async throws {
        try await pool.write { db in try Self.remove(ids: ids, db) }
    }

    static func remove(ids: [Int64], _ db: Database) throws {
        // A page's entries were journaled together: their ids come in runs, each one range.
        var single: [Int64] = []
        var ranges: RawStatement?
        var sorted = ids.sorted()[...]
        while let first = sorted.first {
            var last = first
            sorted = sorted.drop { id in
                guard id <= last + 1 else { return false }
                last = id
                return true
            }
            if last - first < 8 {
                single.append(contentsOf: first...last)
                continue
            }
            if ranges == nil { ranges = try RawStatement(db, sql: "DELETE FROM sync_journal WHERE id BETWEEN ? AND ?") }
            ranges!.bind(first, at: 1)
            ranges!.bind(last, at: 2)
            try ranges!.execute()
        }
        for chunk in single.chunked(into: 500) {
            try db.execute(sql: "DELETE FROM sync_journal WHERE id IN (\(SoupStore.placeholders(chunk.count)))",
                           arguments: StatementArguments(chunk))
        }
    }
}
