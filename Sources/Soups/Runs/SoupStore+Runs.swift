import GRDB
import JSON

/// A run as listed by `pipeline runs`: the summary columns and the whole run record JSON.
public struct StoredRun: Sendable, Equatable {
    public var id: String
    public var pipeline: String
    public var status: String
    public var exitCode: Int?
    public var startedAt: String
    public var finishedAt: String?
    public var reportDir: String?
    public var record: JSONValue

    public init(id: String, pipeline: String, status: String, exitCode: Int?, startedAt: String,
                finishedAt: String?, reportDir: String?, record: JSONValue) {
        self.id = id
        self.pipeline = pipeline
        self.status = status
        self.exitCode = exitCode
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.reportDir = reportDir
        self.record = record
    }
}

extension SoupStore {
    /// The records of pipeline runs (`pipeline runs`).
    public var runs: RunRecords { RunRecords(store: self) }
}

/// The records of pipeline runs (`pipeline runs`). Over the store's own database writer.
public struct RunRecords: Sendable {
    let store: SoupStore
    var pool: DatabasePool { store.pool }

    /// Inserts or replaces a run record.
    public func save(_ run: StoredRun) async throws {
        try await pool.write { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO runs (id, pipeline, status, exitCode, startedAt, finishedAt, reportDir, record)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [run.id, run.pipeline, run.status, run.exitCode, run.startedAt, run.finishedAt, run.reportDir,
                                 run.record.jsonString])
        }
    }

    /// Marks runs still recorded as `running` as `killed`: called with the store's lock held, when
    /// no run can be running, so these are runs whose process died (a SIGKILL, a crash, a reboot).
    /// Returns their ids.
    @discardableResult
    public func markDeadKilled() async throws -> [String] {
        try await pool.write { db in
            let ids = try String.fetchAll(db, sql: "SELECT id FROM runs WHERE status = 'running' ORDER BY startedAt")
            try db.execute(sql: "UPDATE runs SET status = 'killed' WHERE status = 'running'")
            return ids
        }
    }

    /// Every run, oldest first.
    public func all() async throws -> [StoredRun] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM runs ORDER BY startedAt, id").map { row in
                StoredRun(id: row["id"], pipeline: row["pipeline"], status: row["status"], exitCode: row["exitCode"],
                          startedAt: row["startedAt"], finishedAt: row["finishedAt"], reportDir: row["reportDir"],
                          record: try JSONParser.parse(row["record"] as String))
            }
        }
    }
}
