import Soups

/// A unit of sync up: one record of a flat target, or a parent and its local children.
public struct SyncUpTree: Sendable {
    public var parent: SyncUpRecord
    public var children: [SyncUpRecord]
    /// The parent-children relationship, `nil` for a flat target.
    public var relationship: RelationshipType?
    /// The children's field holding the parent's id.
    public var parentIdField: String?
    /// The child relationship name (`Contacts`), used to read the children's server timestamps.
    public var childRelationshipName: String?
    /// Set once the parent's delete is confirmed in this run: its children keep no link to it.
    public var parentRemoved = false

    public init(parent: SyncUpRecord, children: [SyncUpRecord] = [], relationship: RelationshipType? = nil, parentIdField: String? = nil,
                childRelationshipName: String? = nil) {
        self.parent = parent
        self.children = children
        self.relationship = relationship
        self.parentIdField = parentIdField
        self.childRelationshipName = childRelationshipName
    }

    /// Every record of the tree, parent first.
    public var records: [SyncUpRecord] { [parent] + children }

    /// Each record with its position (`nil` for the parent), parent first — without building an array.
    var positionedRecords: LazyMapSequence<Range<Int>, (child: Int?, record: SyncUpRecord)> {
        (-1..<children.count).lazy.map { $0 < 0 ? (nil, parent) : ($0, children[$0]) }
    }

    /// The record at `position` (`nil` = the parent).
    subscript(position: Int?) -> SyncUpRecord {
        get { position.map { children[$0] } ?? parent }
        set {
            if let position { children[position] = newValue } else { parent = newValue }
        }
    }

    /// `true` when the parent or a child has something to send or discard.
    public var isDirty: Bool { records.contains { $0.action != .none } }
}
