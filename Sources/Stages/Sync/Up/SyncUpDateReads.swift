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

    /// The field to read back after `call` writes records of `objectType`, `parentsOfChildren`
    /// when the call writes parents whose children's calls follow it in the same request; `nil`
    /// for none (deletes, and creates of an object marked as created).
    func field(after call: SyncUpRequest.CollectionCall, of objectType: String, parentsOfChildren: Bool) -> String? {
        guard call != .delete, let field = fields[objectType] else { return nil }
        return call == .create && !parentsOfChildren && Self.markedAsCreated(field: field) ? nil : field
    }
}
