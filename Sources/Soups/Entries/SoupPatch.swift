import JSON

/// Top-level fields written into stored entries in place (``SoupStore/patch(_:)``): each entry's
/// JSON text is rewritten member by member, the members left alone copied as they are, never
/// read into an object — what settling a Bulk job's creates costs is a read and a write of each
/// row. Sync flags are written as given (not normalized).
public struct SoupPatch: Sendable {
    /// One entry to patch.
    public struct Entry: Sendable {
        /// Its `_soupEntryId`.
        public var id: Int64
        /// The `_soupLastModifiedDate` the entry had when its caller read it: an entry changed
        /// since is not patched.
        public var lastModified: Int64
        /// The entry's own value of ``SoupPatch/valueField``.
        public var value: JSONValue

        public init(id: Int64, lastModified: Int64, value: JSONValue) {
            self.id = id
            self.lastModified = lastModified
            self.value = value
        }
    }

    public var soup: String
    /// Fields given the same value in every entry; a `nil` value removes the field.
    public var fields: [(name: String, value: JSONValue?)]
    /// The field given each entry's own ``Entry/value``.
    public var valueField: String
    /// Records each patched entry's data fields as what the org confirmed (see
    /// ``SoupStore/setConfirmed(_:in:)``).
    public var confirming = false
    /// Fields whose values, as they were before the patch, ``SoupStore/patch(_:)`` returns.
    public var reading: [String] = []
    /// Journal entries settled in the same transaction.
    public var settledJournalIds: [Int64] = []
    public var entries: [Entry] = []

    public init(soup: String, fields: [(name: String, value: JSONValue?)], valueField: String) {
        self.soup = soup
        self.fields = fields
        self.valueField = valueField
    }
}
