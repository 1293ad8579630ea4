/// A JSON object whose keys keep the order they were first written in.
public struct JSONObject: Sendable, Hashable, Sequence {
    /// The keys in document order.
    public private(set) var keys: [String] = []
    private var storage: [String: JSONValue] = [:]

    /// An empty object.
    public init() {}

    /// The number of members.
    public var count: Int { keys.count }

    /// `true` when the object has no members.
    public var isEmpty: Bool { keys.isEmpty }

    /// Reads or writes a member. Writing `nil` removes the key; writing an existing key keeps its place.
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// `true` when the key is present (even with a `null` value).
    public func contains(_ key: String) -> Bool { storage[key] != nil }

    /// Iterates members in document order.
    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var index = 0
        return AnyIterator {
            guard index < keys.count else { return nil }
            defer { index += 1 }
            let key = keys[index]
            return (key, storage[key]!)
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.storage == rhs.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object with the members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}
