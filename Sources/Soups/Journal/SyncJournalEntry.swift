import JSON

/// A write a sync up is about to send, recorded before it goes out: if the run dies, or the answer
/// is lost, the next run finds the entry and reconciles with the org before sending anything again.
public struct SyncJournalEntry: Sendable, Equatable {
    /// The operation sent for a record.
    public enum Operation: String, Sendable {
        case create, upsert, update, delete
    }

    /// Set by the store.
    public var id: Int64
    public var syncName: String
    public var soupName: String
    /// The soup entry the write is for.
    public var entryId: Int64
    public var operation: Operation
    public var objectType: String
    /// The server id (updates, deletes) or the external id value (upserts), when there is one.
    public var recordId: String?
    /// The fields sent.
    public var payload: JSONObject
    /// Epoch milliseconds when the request was sent.
    public var sentAt: Int64

    public init(id: Int64 = 0, syncName: String, soupName: String, entryId: Int64, operation: Operation, objectType: String,
                recordId: String?, payload: JSONObject, sentAt: Int64) {
        self.id = id
        self.syncName = syncName
        self.soupName = soupName
        self.entryId = entryId
        self.operation = operation
        self.objectType = objectType
        self.recordId = recordId
        self.payload = payload
        self.sentAt = sentAt
    }
}
