/// A JSON object whose keys keep the order they were first written in.
///
/// Members live in one array, searched linearly while the object is small (most records have a
/// few dozen fields at most, and comparing short keys beats hashing them); an index by key is
/// added once an object grows past ``indexThreshold`` members.
public struct JSONObject: Sendable, Hashable, Sequence {
    fileprivate struct Member: Sendable {
        var key: String
        var value: JSONValue
    }

    private var members: [Member] = []
    /// Position of each key, kept only for large objects.
    private var positions: [String: Int]?
    /// Whether some key holds a non-ASCII character (once true, kept). Only then can a key equal
    /// one of another UTF-8 length: `String` compares canonical equivalents as equal.
    private var hasNonASCIIKey = false

    /// Objects with more members than this get an index by key.
    static let indexThreshold = 24

    /// An empty object.
    public init() {}

    /// An object of `pairs` in their order, built without a lookup per member (the keys must be
    /// unique; checked in debug builds). Its lookups scan the members until a member is added:
    /// made for an object built to be written out.
    public init(uniqueKeysWithValues pairs: [(String, JSONValue)]) {
        // An array, not any sequence: generic, it ran unspecialized from other modules.
        members.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            members.append(Member(key: key, value: value))
            noteNonASCII(key)
        }
        assert(Set(members.map(\.key)).count == members.count, "JSONObject(uniqueKeysWithValues:): a key is repeated")
    }

    /// The keys in document order.
    public var keys: [String] { members.map(\.key) }

    /// The number of members.
    public var count: Int { members.count }

    /// `true` when the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        guard !hasNonASCIIKey else { return members.firstIndex { $0.key == key } }
        // Every key is ASCII: one equal to `key` has its UTF-8 length (a string equal to an ASCII
        // one but spelled otherwise, like the Kelvin sign for "K", is longer). A key's UTF-8 count
        // is stored, so most keys are passed over without a string comparison (lookups ~15%
        // faster on records of a dozen fields), and whether `key` itself is ASCII is asked only
        // when it is not found.
        let length = key.utf8.count
        if let position = members.firstIndex(where: { $0.key.utf8.count == length && $0.key == key }) { return position }
        return Self.isASCII(key) ? nil : members.firstIndex { $0.key == key }
    }

    /// Each key's position. Keys equal as strings but spelled apart (a composed and a decomposed
    /// "é"), which the parser keeps as two members, find the first, as a scan would.
    private static func index(of members: [Member]) -> [String: Int] {
        Dictionary(members.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Records that a key added holds a non-ASCII character.
    private mutating func noteNonASCII(_ key: String) {
        if !hasNonASCIIKey && !Self.isASCII(key) { hasNonASCIIKey = true }
    }

    private static func isASCII(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            return high < 0x80
        }
    }

    /// Reads or writes a member. Writing `nil` removes the key; writing an existing key keeps its place.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else if let position = position(of: key) {
                members.remove(at: position)
                if positions != nil {
                    positions = members.count > Self.indexThreshold
                        ? Self.index(of: members) : nil
                }
            }
        }
    }

    /// Sets a member with one lookup of its key, and says whether the key was already present
    /// (its value replaced, its place kept).
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> Bool {
        if let position = position(of: key) {
            members[position].value = value
            return true
        }
        members.append(Member(key: key, value: value))
        noteNonASCII(key)
        if positions != nil {
            positions![key] = members.count - 1
        } else if members.count > Self.indexThreshold {
            positions = Self.index(of: members)
        }
        return false
    }

    /// Sets a member like ``updateValue(_:forKey:)`` and hands back the value it replaced (`nil`
    /// when the member was appended), so a caller can put the object back as it was.
    public mutating func replaceValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        guard let position = position(of: key) else {
            updateValue(value, forKey: key)
            return nil
        }
        var value = value
        swap(&value, &members[position].value)
        return value
    }

    /// Removes the members after the first `count` (those appended since the object had `count`).
    public mutating func removeMembers(after count: Int) {
        guard count < members.count else { return }
        members.removeSubrange(count...)
        if positions != nil {
            positions = members.count > Self.indexThreshold ? Self.index(of: members) : nil
        }
    }

    /// Appends a member whose key the caller knows is absent as bytes (no lookup); a key equal
    /// to an earlier one as a string keeps finding the earlier.
    mutating func appendAbsent(_ value: JSONValue, forKey key: String) {
        members.append(Member(key: key, value: value))
        noteNonASCII(key)
        if positions != nil {
            if positions![key] == nil { positions![key] = members.count - 1 }
        } else if members.count > Self.indexThreshold {
            positions = Self.index(of: members)
        }
    }

    /// `true` when the key is present (even with a `null` value).
    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    /// Reserves room for `capacity` members.
    public mutating func reserveCapacity(_ capacity: Int) { members.reserveCapacity(capacity) }

    /// Iterates members in document order.
    public struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[Member]>

        public mutating func next() -> (key: String, value: JSONValue)? {
            base.next().map { ($0.key, $0.value) }
        }
    }

    public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }

    /// Equal when both hold the same keys with equal values, whatever their order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// Order-independent, like ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object with the members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}
