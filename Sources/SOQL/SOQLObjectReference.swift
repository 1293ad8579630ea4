/// The `FROM` of a query: an object type (or, in a parent-to-child subquery, a child relationship name)
/// with an optional alias.
///
/// `position` is where the name starts in the parsed text, for `SOQLError.unsupportedObjectType`; it
/// takes no part in equality.
public struct SOQLObjectReference: Sendable, Hashable, CustomStringConvertible {
    /// The object type or child relationship name.
    public internal(set) var name: String
    /// The alias (`FROM Account a`); the parser removes it from the front of field paths.
    public internal(set) var alias: String?
    /// Where the name starts in the parsed text; `nil` for a built one.
    public internal(set) var position: SOQLSourcePosition?

    /// An object reference checked to be made of identifiers.
    public init(_ name: String, alias: String? = nil) throws(SOQLError) {
        self.name = try SOQLParser.name(name, allowingPath: false)[0]
        self.alias = try alias.map { (alias) throws(SOQLError) in try SOQLParser.alias(alias) }
    }

    init(name: String, alias: String?, position: SOQLSourcePosition?) {
        self.name = name
        self.alias = alias
        self.position = position
    }

    /// `Account` or `Account a`.
    public var description: String { alias.map { "\(name) \($0)" } ?? name }

    public static func == (lhs: SOQLObjectReference, rhs: SOQLObjectReference) -> Bool {
        lhs.name == rhs.name && lhs.alias == rhs.alias
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(alias)
    }
}
