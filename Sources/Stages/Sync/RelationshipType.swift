/// The relationship between the parent and the children of a parent-children target.
public enum RelationshipType: String, Sendable {
    /// Deleting a parent deletes its children (on the server by cascade, and locally).
    case masterDetail = "MASTER_DETAIL"
    /// Children outlive a deleted parent; their parent field is cleared.
    case lookup = "LOOKUP"
}
