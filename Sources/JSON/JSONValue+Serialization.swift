extension JSONValue {
    /// Compact JSON text: keys in stored order, no insignificant whitespace.
    public var jsonString: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        write(into: &bytes, indent: nil, level: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Indented JSON text (two spaces) for people to read.
    public var prettyJSONString: String {
        var bytes: [UInt8] = []
        write(into: &bytes, indent: 2, level: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact UTF-8 encoding of this value to `bytes`.
    public func write(into bytes: inout [UInt8]) {
        write(into: &bytes, indent: nil, level: 0)
    }

    private func write(into bytes: inout [UInt8], indent: Int?, level: Int) {
        switch self {
        case .null: JSONValue.append("null", to: &bytes)
        case .bool(let value): JSONValue.append(value ? "true" : "false", to: &bytes)
        case .integer(let value): JSONValue.writeInteger(value, into: &bytes)
        case .double(let value):
            if value.isFinite {
                if value.rounded() == value && abs(value) < 1e15 {
                    bytes.append(contentsOf: String(Int64(value)).utf8)
                    bytes.append(contentsOf: [0x2E, 0x30])
                } else {
                    bytes.append(contentsOf: "\(value)".utf8)
                }
            } else {
                JSONValue.append("null", to: &bytes)
            }
        case .string(let value): JSONValue.writeString(value, into: &bytes)
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in array.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(&bytes, indent: indent, level: level + 1)
                element.write(into: &bytes, indent: indent, level: level + 1)
            }
            if !array.isEmpty { newline(&bytes, indent: indent, level: level) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                newline(&bytes, indent: indent, level: level + 1)
                JSONValue.writeString(key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                if indent != nil { bytes.append(0x20) }
                value.write(into: &bytes, indent: indent, level: level + 1)
            }
            if !object.isEmpty { newline(&bytes, indent: indent, level: level) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static func append(_ literal: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private func newline(_ bytes: inout [UInt8], indent: Int?, level: Int) {
        guard let indent else { return }
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(0x20, count: indent * level))
    }

    /// Appends `value` in decimal digits (no `String` made on the way).
    public static func writeInteger(_ value: Int64, into bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits hold any UInt64; filled from the end.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Appends `string` as a quoted, escaped JSON string.
    public static func writeString(_ string: String, into bytes: inout [UInt8]) {
        bytes.append(0x22)
        // Copy the runs that need no escaping in bulk; most strings are one such run.
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { buffer in
            var start = 0
            for offset in 0..<buffer.count {
                let byte = buffer[offset]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<offset]))
                appendEscaped(byte, into: &bytes)
                start = offset + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
        if copied == nil {
            for byte in string.utf8 {
                if byte < 0x20 || byte == 0x22 || byte == 0x5C { appendEscaped(byte, into: &bytes) } else { bytes.append(byte) }
            }
        }
        bytes.append(0x22)
    }

    private static func appendEscaped(_ byte: UInt8, into bytes: inout [UInt8]) {
        switch byte {
        case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
        case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
        case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
        case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
        default:
            let hex: StaticString = "0123456789abcdef"
            let digits = hex.utf8Start
            bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }
    }
}

extension JSONObject {
    /// Appends the compact encoding of the members whose key passes `include`: a filtered copy's
    /// text without making the copy.
    public func write(into bytes: inout [UInt8], including include: (String) -> Bool) {
        write(into: &bytes) { key, _ in include(key) }
    }

    /// Appends the compact encoding of the members that pass `include`.
    public func write(into bytes: inout [UInt8], where include: (String, JSONValue) -> Bool) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in self where include(key, value) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.writeString(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value.write(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// ``write(into:including:)``, also appending to `subset` the encoding of the members written
    /// whose key passes `select` — each copied from the bytes just written, not encoded again.
    public func write(into bytes: inout [UInt8], including include: (String) -> Bool, alsoInto subset: inout [UInt8],
                      selecting select: (String) -> Bool) {
        bytes.append(UInt8(ascii: "{"))
        subset.append(UInt8(ascii: "{"))
        var first = true
        var firstSelected = true
        for (key, value) in self where include(key) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            let start = bytes.count
            JSONValue.writeString(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value.write(into: &bytes)
            guard select(key) else { continue }
            if !firstSelected { subset.append(UInt8(ascii: ",")) }
            firstSelected = false
            subset.append(contentsOf: bytes[start...])
        }
        bytes.append(UInt8(ascii: "}"))
        subset.append(UInt8(ascii: "}"))
    }
}
