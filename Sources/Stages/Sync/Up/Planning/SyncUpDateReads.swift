/// Which records a LEAVE_IF_CHANGED sync up reads back once written, for the modification date
/// the org gave them, so that the next sync up does not take its own write for a server change.
/// A record it created needs no read when its date field is `LastModifiedDate`: the org sets that
/// to the record's `CreatedDate`, so the entry is marked ``SyncField/asCreated`` instead and the
/// next conflict check compares the org's two dates (``SyncUpConflictChecker``). A new parent
/// whose children are written after it is read all the same: the org may change it on their
/// account (a roll-up summary, a trigger), and that change is ours, not a conflict.
struct SyncUpDateReads: Sendable {
    /// Each object's modification date field; empty when nothing is read back.
    var fields: [String: String] = [:]

    /// The date field whose org value a created record of its object takes without a read.
    static let createdField = "LastModifiedDate"

    /// Whether a record of an object whose date field is `field`, created by the sync up, may be
    /// marked ``SyncField/asCreated`` rather than read back.
    static func markedAsCreated(field: String) -> Bool { field == createdField }

    /// For each Collections call of one request, in order, the field read back after it; `nil` for
    /// none (deletes, and creates of an object marked as created that are not parents of children
    /// written in the same request). The packer counts its slots by it, the sender its retrieves.
    func fields(after calls: [(call: SyncUpRequest.CollectionCall, objectType: String, parents: Bool)]) -> [String?] {
        guard !fields.isEmpty else { return calls.map { _ in nil } }
        let withChildren = calls.contains { !$0.parents }
        return calls.map { call, objectType, parents in
            guard call != .delete, let field = fields[objectType] else { return nil }
            return call == .create && !(parents && withChildren) && Self.markedAsCreated(field: field) ? nil : field
        }
    }
}
