/// The kind of a soup index, as Mobile SDK's `userstore.json` spells it.
public enum IndexType: String, Sendable, Codable, CaseIterable {
    /// A TEXT column; booleans are stored as `"true"` / `"false"`.
    case string
    /// An INTEGER column.
    case integer
    /// A REAL column.
    case floating
    /// A TEXT column mirrored into an FTS5 table for `match` queries.
    case fullText = "full_text"
    /// No column: an expression index on `json_extract(soup, '$.path')`.
    case json1
}

/// One indexed path of a soup.
public struct IndexSpec: Sendable, Hashable, Codable {
    /// A dotted path into the entry, e.g. `Id` or `attributes.type`.
    public var path: String
    public var type: IndexType

    public init(path: String, type: IndexType) {
        self.path = path
        self.type = type
    }
}

/// A soup's name and indexes.
public struct SoupSpec: Sendable, Hashable, Codable {
    public var name: String
    public var indexes: [IndexSpec]

    public init(name: String, indexes: [IndexSpec]) {
        self.name = name
        self.indexes = indexes
    }

    /// The index on `path`, if the soup has one.
    public func index(forPath path: String) -> IndexSpec? {
        indexes.first { $0.path == path }
    }
}
