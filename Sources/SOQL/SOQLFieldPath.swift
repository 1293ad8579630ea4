/// A field reference, possibly through parent relationships: `Name`, `Account.Owner.Name`.
///
/// `position` is where the reference starts in the parsed text, for `SOQLError.noSuchColumn`; it takes
/// no part in equality, so a parsed query equals the same query re-parsed from its printed text.
public struct SOQLFieldPath: Sendable, Hashable, CustomStringConvertible {
    /// The relationship names followed by the field name.
    public internal(set) var components: [String]
    /// Where the reference starts in the parsed text; `nil` for a built one.
    public internal(set) var position: SOQLSourcePosition?

    /// A field path from dotted text, checked to be one: `try SOQLFieldPath("Account.Name")`.
    public init(_ dottedPath: String) throws(SOQLError) {
        self.components = try SOQLParser.name(dottedPath, allowingPath: true)
    }

    init(components: [String], position: SOQLSourcePosition?) {
        self.components = components
        self.position = position
    }

    /// The field name, the last component.
    public var fieldName: String { components[components.count - 1] }

    /// The relationship names leading to the field (`["Account", "Owner"]` for `Account.Owner.Name`).
    public var relationships: ArraySlice<String> { components.dropLast() }

    /// The dotted path.
    public var description: String { components.joined(separator: ".") }

    public static func == (lhs: SOQLFieldPath, rhs: SOQLFieldPath) -> Bool {
        lhs.components == rhs.components
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(components)
    }
}
