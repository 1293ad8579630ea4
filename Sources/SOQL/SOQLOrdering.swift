/// One key of an `ORDER BY`: `Name DESC NULLS LAST`.
public struct SOQLOrdering: Sendable, Hashable, CustomStringConvertible {
    public enum Direction: String, Sendable, Hashable {
        case ascending = "ASC"
        case descending = "DESC"
    }

    public enum NullsPosition: String, Sendable, Hashable {
        case first = "FIRST"
        case last = "LAST"
    }

    public var field: SOQLFieldPath
    public var direction: Direction
    /// Where nulls go when written; `nil` means Salesforce's default (`nullsFirst`).
    public var nulls: NullsPosition?

    public init(_ field: SOQLFieldPath, _ direction: Direction = .ascending, nulls: NullsPosition? = nil) {
        self.field = field
        self.direction = direction
        self.nulls = nulls
    }

    /// Whether nulls sort first: as written, else first when ascending and last when descending.
    public var nullsFirst: Bool { nulls.map { $0 == .first } ?? (direction == .ascending) }

    /// `Name DESC NULLS LAST`.
    public var description: String { SOQLPrinter.ordering(self) }
}
