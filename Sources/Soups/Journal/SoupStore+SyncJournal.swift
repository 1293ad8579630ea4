import GRDB
import JSON

extension SoupStore {
    /// Records writes about to be sent (one transaction); returns their journal ids, in order.
    @discardableResult
    public func appendToJournal(_ entries: [SyncJournalEntry]) async throws -> [Int64] {
        try await pool.write { db in
            let statement = try RawStatement(db, sql: """
                INSERT INTO sync_journal (syncName, soupName, entryId, operation, objectType, recordId, payload, sentAt,
                                          serverSentAt, settledBy, linkField, linkSoup, linkEntryId, bulkJobId)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var payload: [UInt8] = []
            return try entries.map { entry in
                payload.removeAll(keepingCapacity: true)
                JSONValue.object(entry.payload).write(into: &payload)
                let columns: [DatabaseValue] = [
                    entry.syncName.databaseValue, entry.soupName.databaseValue, entry.entryId.databaseValue,
                    entry.operation.rawValue.databaseValue, entry.objectType.databaseValue, entry.recordId.databaseValue,
                ]
                for (offset, value) in columns.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
                statement.bind(text: payload, at: 7)
                let rest: [DatabaseValue] = [
                    entry.sentAt.databaseValue, entry.serverSentAt.databaseValue, entry.settledBy.databaseValue,
                    entry.link?.field.databaseValue ?? .null, entry.link?.soupName.databaseValue ?? .null,
                    entry.link?.entryId.databaseValue ?? .null, entry.bulkJobId.databaseValue,
                ]
                for (offset, value) in rest.enumerated() { statement.bind(value, at: Int32(offset + 8)) }
                try statement.execute()
                return db.lastInsertedRowID
            }
        }
    }

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
    public func restampJournal(ids: [Int64], sentAt: Int64, serverSentAt: Int64, settledBy: Int64) async throws {
        try await pool.write { db in
            for chunk in ids.chunked(into: 500) {
                try db.execute(sql: "UPDATE sync_journal SET sentAt = ?, serverSentAt = ?, settledBy = ? WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                               arguments: StatementArguments([sentAt, serverSentAt, settledBy] + chunk))
            }
        }
    }

    /// The writes of a sync still waiting for a confirmed outcome, oldest first.
    public func journal(of syncName: String) async throws -> [SyncJournalEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM sync_journal WHERE syncName = ? ORDER BY id", arguments: [syncName]).map { row in
                let linkField: String? = row["linkField"]
                let linkSoup: String? = row["linkSoup"]
                let linkEntryId: Int64? = row["linkEntryId"]
                return SyncJournalEntry(
                    id: row["id"], syncName: row["syncName"], soupName: row["soupName"], entryId: row["entryId"],
                    operation: SyncJournalEntry.Operation(rawValue: row["operation"]) ?? .update, objectType: row["objectType"],
                    recordId: row["recordId"], payload: try Self.decodeEntry(row["payload"]), sentAt: row["sentAt"],
                    serverSentAt: row["serverSentAt"], settledBy: row["settledBy"],
                    link: linkField.flatMap { field in
                        linkSoup.flatMap { soup in linkEntryId.map { SyncJournalEntry.Link(field: field, soupName: soup, entryId: $0) } }
                    },
                    bulkJobId: row["bulkJobId"])
            }
        }
    }

    /// Forgets journal entries whose outcome is settled.
    public func removeFromJournal(ids: [Int64]) async throws {
        try await pool.write { db in try Self.removeFromJournal(ids: ids, db) }
    }

    static func removeFromJournal(ids: [Int64], _ db: Database) throws {
        for chunk in ids.chunked(into: 500) {
            try db.execute(sql: "DELETE FROM sync_journal WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                           arguments: StatementArguments(chunk))
        }
    }
}
