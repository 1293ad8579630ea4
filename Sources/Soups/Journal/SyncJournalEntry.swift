import JSON

/// A write a sync up is about to send, recorded before it goes out: if the run dies, or the answer
/// is lost, the next run finds the entry and reconciles with the org before sending anything again.
public struct SyncJournalEntry: Sendable, Equatable {
    /// The operation sent for a record.
    public enum Operation: String, Sendable {
        case create, upsert, update, delete
    }

    /// The record this write's reference field points to, when that record had no server id yet
    /// when the write was packed (a child sent with its new parent, `@{ref.id}` in one request).
    public struct Link: Sendable, Equatable {
        /// The reference field (`AccountId`), absent from ``SyncJournalEntry/payload``.
        public var field: String
        public var soupName: String
        public var entryId: Int64

        public init(field: String, soupName: String, entryId: Int64) {
            self.field = field
            self.soupName = soupName
            self.entryId = entryId
        }
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
    /// The fields sent (a ``link`` field excepted).
    public var payload: JSONObject
    /// Epoch milliseconds, on this machine's clock, when the request was sent.
    public var sentAt: Int64
    /// The same instant on the org's clock, as far as the client could tell (its `Date` headers);
    /// `nil` for entries journaled before this was recorded.
    public var serverSentAt: Int64?
    /// Epoch milliseconds, on this machine's clock, after which the org can no longer be executing
    /// the write (sent + client timeout + the org's request deadline); `nil`: unknown.
    public var settledBy: Int64?
    public var link: Link?
    /// The Bulk API 2.0 ingest job that carries this write, recorded before its data is uploaded.
    public var bulkJobId: String?

    public init(id: Int64 = 0, syncName: String, soupName: String, entryId: Int64, operation: Operation, objectType: String,
                recordId: String?, payload: JSONObject, sentAt: Int64, serverSentAt: Int64? = nil, settledBy: Int64? = nil,
                link: Link? = nil, bulkJobId: String? = nil) {
        self.id = id
        self.syncName = syncName
        self.soupName = soupName
        self.entryId = entryId
        self.operation = operation
        self.objectType = objectType
        self.recordId = recordId
        self.payload = payload
        self.sentAt = sentAt
        self.serverSentAt = serverSentAt
        self.settledBy = settledBy
        self.link = link
        self.bulkJobId = bulkJobId
    }
}
