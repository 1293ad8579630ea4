import JSON

/// A named sync and its state, in Mobile SDK's SyncState shape.
public struct SyncState: Sendable, Equatable {
    public enum SyncType: String, Sendable {
        case syncDown, syncUp
    }

    public enum Status: String, Sendable {
        case new = "NEW", running = "RUNNING", done = "DONE", failed = "FAILED", stopped = "STOPPED"
    }

    /// The sync's id (`_soupEntryId` in Mobile SDK); written into `__sync_id__` by sync down.
    public var id: Int64
    public var name: String
    public var type: SyncType
    public var soupName: String
    /// The target JSON as declared (`type`, `query`, `parent`, `children`, …).
    public var target: JSONObject
    /// The options JSON (`mergeMode`, `fieldlist`).
    public var options: JSONObject
    public var status: Status
    /// 0…100.
    public var progress: Int
    /// -1 until known.
    public var totalSize: Int
    /// Epoch milliseconds of the newest record stored, -1 when unset.
    public var maxTimeStamp: Int64
    /// Epoch milliseconds, -1 when unset.
    public var startTime: Int64
    public var endTime: Int64
    public var error: String

    /// A sync as Mobile SDK creates it: NEW, progress 0, sizes and times -1, no error.
    public init(id: Int64 = 0, name: String, type: SyncType, soupName: String, target: JSONObject, options: JSONObject) {
        self.id = id
        self.name = name
        self.type = type
        self.soupName = soupName
        self.target = target
        self.options = options
        status = .new
        progress = 0
        totalSize = -1
        maxTimeStamp = -1
        startTime = -1
        endTime = -1
        error = ""
    }

    /// `true` while the sync is running.
    public var isRunning: Bool { status == .running }

    /// Moves to a new status with Mobile Sync's time rules: entering RUNNING sets `startTime`;
    /// leaving RUNNING for DONE, FAILED or STOPPED sets `endTime`.
    public mutating func transition(to newStatus: Status, at now: Int64) {
        if newStatus == .running && status != .running { startTime = now; endTime = -1 }
        if status == .running && newStatus != .running && newStatus != .new { endTime = now }
        status = newStatus
    }

    /// The Mobile SDK SyncState JSON (`pipeline syncs --json`).
    public var json: JSONValue {
        var object = JSONObject()
        object["_soupEntryId"] = .integer(id)
        object["name"] = .string(name)
        object["type"] = .string(type.rawValue)
        object["target"] = .object(target)
        object["options"] = .object(options)
        object["soupName"] = .string(soupName)
        object["status"] = .string(status.rawValue)
        object["progress"] = .integer(Int64(progress))
        object["totalSize"] = .integer(Int64(totalSize))
        object["maxTimeStamp"] = .integer(maxTimeStamp)
        object["startTime"] = .integer(startTime)
        object["endTime"] = .integer(endTime)
        object["error"] = .string(error)
        return .object(object)
    }
}
