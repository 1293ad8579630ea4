/// A JSON value that keeps object keys in document order and integers exact.
///
/// Records, soup entries, pipeline files and Mobile SDK config files all travel as `JSONValue`, so
/// one parser (with line and column in its errors) and one printer serve the whole package.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The object payload, or `nil` for any other kind of value.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The array payload, or `nil` for any other kind of value.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The string payload, or `nil` for any other kind of value.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The boolean payload, or `nil` for any other kind of value (strings are not coerced).
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The number as an integer when it is one (a double with no fraction counts).
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.2e18: return Int64(value)
        default: return nil
        }
    }

    /// The number as a double, for either numeric case.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// `true` for JSON `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Mobile Sync flag truthiness: `true`, `"true"` (any case) and non-zero numbers are true.
    ///
    /// Apps write `__local__` and friends in all three shapes; every reader of a flag goes through here.
    public var isTruthy: Bool {
        switch self {
        case .bool(let value): return value
        case .string(let value): return value.lowercased() == "true" || value == "1"
        case .integer(let value): return value != 0
        case .double(let value): return value != 0
        default: return false
        }
    }

    /// The name of this value's kind as JSON Schema spells it, for error messages.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Reads a member of an object value; `nil` for missing keys and for non-objects.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// Reads an element of an array value; `nil` out of bounds and for non-arrays.
    public subscript(index: Int) -> JSONValue? {
        guard let array = arrayValue, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// Follows a dotted path (`Account.Name`) through nested objects.
    public func value(atPath path: String) -> JSONValue? {
        var current: JSONValue? = self
        for component in path.split(separator: ".", omittingEmptySubsequences: false) {
            guard let object = current?.objectValue else { return nil }
            current = object[String(component)]
        }
        return current
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}
