import JSON

/// A SmartStore query over one soup: which entries, in which order, a page at a time.
public struct QuerySpec: Sendable {
    /// How entries are chosen.
    public enum Kind: Sendable {
        /// Every entry.
        case all
        /// Entries whose `path` equals `matchKey`.
        case exact(path: String, matchKey: JSONValue)
        /// Entries whose `path` lies between the bounds (inclusive); a `nil` bound is open.
        case range(path: String, beginKey: JSONValue?, endKey: JSONValue?)
        /// Entries whose `path` matches a SQL `LIKE` pattern.
        case like(path: String, likeKey: String)
        /// Entries whose full-text index matches an FTS5 query; `path` `nil` searches every full_text index.
        case match(path: String?, matchKey: String)
    }

    public enum Order: String, Sendable {
        case ascending, descending
    }

    public var soupName: String
    public var kind: Kind
    /// The path to sort on; default `_soupEntryId`.
    public var orderPath: String
    public var order: Order
    public var pageSize: Int

    public init(
        soupName: String, kind: Kind = .all, orderPath: String = SyncField.soupEntryId,
        order: Order = .ascending, pageSize: Int = 1000
    ) {
        self.soupName = soupName
        self.kind = kind
        self.orderPath = orderPath
        self.order = order
        self.pageSize = pageSize
    }
}
