import GRDB
import JSON

extension SoupStore {
    /// The named syncs and their states (Mobile Sync's sync states).
    public var syncs: SyncStates { SyncStates(store: self) }
}

/// The named syncs and their states (Mobile Sync's sync states). Over the store's own database writer.
public struct SyncStates: Sendable {
    let store: SoupStore
    var pool: DatabasePool { store.pool }

    /// Creates a named sync in state NEW, or returns the existing one of that name unchanged (Mobile
    /// SDK creates configured syncs only once). Throws ``SoupStoreError/duplicateSync(_:)`` when
    /// `failIfExists` and the name is taken.
    @discardableResult
    public func create(_ sync: SyncState, failIfExists: Bool = false) async throws -> SyncState {
        try await pool.write { db in
            if let existing = try Self.sync(named: sync.name, db) {
                if failIfExists { throw SoupStoreError.duplicateSync(sync.name) }
                return existing
            }
            var created = sync
            try db.execute(sql: """
                INSERT INTO syncs (name, type, soupName, target, options, status, progress, totalSize, maxTimeStamp, startTime, endTime, error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [
                    sync.name, sync.type.rawValue, sync.soupName, JSONValue.object(sync.target).jsonString,
                    JSONValue.object(sync.options).jsonString, sync.status.rawValue, sync.progress, sync.totalSize,
                    sync.maxTimeStamp, sync.startTime, sync.endTime, sync.error,
                ])
            created.id = db.lastInsertedRowID
            return created
        }
    }

    /// What ``redefineSync(_:)`` changed.
    public enum Redefinition: Sendable, Equatable {
        case unchanged
        /// Options only (merge mode, field list): the sync's state is kept.
        case options
        /// The target changed: a sync down's `maxTimeStamp` is reset, so its next run fetches
        /// everything the new target selects (an incremental one would skip older records).
        case target
    }

    /// Gives an existing sync the target and options of `sync` (the pipeline file is the source
    /// of truth; Mobile SDK only ever creates a configured sync once), keeping its state.
    public func redefine(_ sync: SyncState) async throws -> Redefinition {
        try await pool.write { db in
            guard let existing = try Self.sync(named: sync.name, db) else { return .unchanged }
            let targetChanged = existing.target != sync.target
            guard targetChanged || existing.options != sync.options else { return .unchanged }
            try db.execute(sql: "UPDATE syncs SET target = ?, options = ? WHERE id = ?",
                           arguments: [JSONValue.object(sync.target).jsonString, JSONValue.object(sync.options).jsonString, existing.id])
            if targetChanged && existing.type == .syncDown {
                try db.execute(sql: "UPDATE syncs SET maxTimeStamp = -1 WHERE id = ?", arguments: [existing.id])
            }
            return targetChanged ? .target : .options
        }
    }

    /// The sync of that name; throws ``SoupStoreError/unknownSync(_:)`` when there is none.
    public func state(named name: String) async throws -> SyncState {
        try await pool.read { db in
            guard let sync = try Self.sync(named: name, db) else { throw SoupStoreError.unknownSync(name) }
            return sync
        }
    }

    /// Every sync, by id.
    public func all() async throws -> [SyncState] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM syncs ORDER BY id").map(Self.syncState)
        }
    }

    /// Saves a sync's state (status, progress, sizes, times, error).
    public func save(_ sync: SyncState) async throws {
        try await pool.write { db in try Self.save(sync, db) }
    }

    static func save(_ sync: SyncState, _ db: Database) throws {
        try db.execute(sql: """
            UPDATE syncs SET status = ?, progress = ?, totalSize = ?, maxTimeStamp = ?, startTime = ?, endTime = ?, error = ?,
              target = ?, options = ?
            WHERE id = ?
            """, arguments: [
                sync.status.rawValue, sync.progress, sync.totalSize, sync.maxTimeStamp, sync.startTime, sync.endTime,
                sync.error, JSONValue.object(sync.target).jsonString, JSONValue.object(sync.options).jsonString, sync.id,
            ])
        guard db.changesCount == 1 else { throw SoupStoreError.unknownSync(sync.name) }
    }

    /// Marks every RUNNING sync STOPPED, as Mobile Sync does when its manager starts: a sync found
    /// RUNNING belongs to a process that died. Returns the names changed.
    @discardableResult
    public func stopOrphaned(at now: Int64) async throws -> [String] {
        try await pool.write { db in
            let names = try String.fetchAll(db, sql: "SELECT name FROM syncs WHERE status = 'RUNNING' ORDER BY id")
            try db.execute(sql: "UPDATE syncs SET status = 'STOPPED', endTime = ? WHERE status = 'RUNNING'", arguments: [now])
            return names
        }
    }

    static func sync(named name: String, _ db: Database) throws -> SyncState? {
        try Row.fetchOne(db, sql: "SELECT * FROM syncs WHERE name = ?", arguments: [name]).map(syncState)
    }

    static func syncState(_ row: Row) throws -> SyncState {
        var sync = SyncState(
            id: row["id"], name: row["name"], type: SyncState.SyncType(rawValue: row["type"]) ?? .syncDown,
            soupName: row["soupName"], target: try JSONParser.parse(row["target"] as String).objectValue ?? JSONObject(),
            options: try JSONParser.parse(row["options"] as String).objectValue ?? JSONObject())
        sync.status = SyncState.Status(rawValue: row["status"]) ?? .new
        sync.progress = row["progress"]
        sync.totalSize = row["totalSize"]
        sync.maxTimeStamp = row["maxTimeStamp"]
        sync.startTime = row["startTime"]
        sync.endTime = row["endTime"]
        sync.error = row["error"]
        return sync
    }
}
