import Crypto
import Formulas
import Foundation
import JSON

/// Replaces personal data with realistic fake values of the same kind. With a seed, a keyed hash
/// of the value chooses the fake one, so the same value masks the same way in every object and
/// every run (masked keys still link records); another seed gives other values.
struct ValueMasker: Sendable {
    /// The kinds of data `mask` knows.
    enum Kind: String, CaseIterable, Sendable {
        case firstName, lastName, fullName, email, phone, street, city, postalCode, company, text, digits, date, null, hash
    }

    private let keyed: KeyedHash
    private let hmacKey: SymmetricKey

    /// `seed`: the secret `maskSeed`; `nil` draws a random one for this run.
    init(seed: String?) {
        let secret = seed ?? UUID().uuidString + UUID().uuidString
        keyed = KeyedHash(seed: secret)
        hmacKey = SymmetricKey(data: SHA256.hash(data: Data(("hmac\u{0}" + secret).utf8)))
    }

    /// The masked value of `value`. Blank values (absent, `null`, `""`) stay as they are.
    func mask(_ value: JSONValue, as kind: Kind) -> JSONValue {
        if kind == .null { return .null }
        let text: String
        switch value {
        case .null: return value
        case .string(let string): text = string
        case .integer(let number): text = String(number)
        case .double(let number): text = String(number)
        case .bool, .array, .object: return kind == .hash ? .string(hmac(value.jsonString)) : .null
        }
        if text.isEmpty { return value }
        let masked = fake(text, as: kind)
        switch value {
        case .integer: return Int64(masked).map(JSONValue.integer) ?? .string(masked)
        case .double: return Double(masked).map(JSONValue.double) ?? .string(masked)
        default: return .string(masked)
        }
    }

    /// The fake value of a non-empty text.
    private func fake(_ text: String, as kind: Kind) -> String {
        let h = keyed.hash(kind.rawValue, text)
        switch kind {
        case .firstName: return pick(MaskWords.firstNames, h)
        case .lastName: return pick(MaskWords.lastNames, h)
        case .fullName: return Self.spaced(pick(MaskWords.firstNames, h), pick(MaskWords.lastNames, h >> 20))
        case .email:
            let domains = ["example.com", "example.org", "example.net"]
            return (pick(MaskWords.firstNames, h) + "." + pick(MaskWords.lastNames, h >> 20)).lowercased()
                + String((h >> 40) % 10_000) + "@" + pick(domains, h >> 54)
        case .phone: return Self.phone(text, h)
        case .street: return "\(1 + h % 9_999) \(pick(MaskWords.streetNames, h >> 14)) \(pick(MaskWords.streetSuffixes, h >> 30))"
        case .city: return pick(MaskWords.cities, h)
        case .company: return Self.spaced(pick(MaskWords.companyWords, h), pick(MaskWords.companySuffixes, h >> 24))
        case .postalCode, .digits: return Self.sameLayout(text, h, letters: kind == .postalCode)
        case .text: return Self.words(count: text.count, h)
        case .date: return Self.shiftedDate(text, h)
        case .hash: return hmac(text)
        case .null: return ""
        }
    }

    private func pick(_ words: [String], _ h: UInt64) -> String { words[Int(h % UInt64(words.count))] }

    private func hmac(_ text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: hmacKey) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// A stream of pseudo-random numbers from one hash (SplitMix64).
    private struct Stream {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E3779B97F4A7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
            z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
            return z ^ (z >> 31)
        }
    }

    /// Digits replaced by digits (and, for postal codes, letters by letters), the rest kept; a
    /// first digit that was not 0 stays not 0, so numbers keep their length.
    private static func sameLayout(_ text: String, _ h: UInt64, letters: Bool) -> String {
        var stream = Stream(state: h)
        var output = ""
        var first = true
        for character in text {
            if character.isASCII, character.isNumber {
                let keepNonZero = first && character != "0"
                output.append(Character(String(keepNonZero ? 1 + stream.next() % 9 : stream.next() % 10)))
                first = false
            } else if letters, character.isASCII, character.isLetter {
                let letter = UInt8(ascii: character.isUppercase ? "A" : "a") + UInt8(stream.next() % 26)
                output.append(Character(UnicodeScalar(letter)))
            } else {
                output.append(character)
            }
        }
        return output
    }

    /// A phone number with its layout: the country code after a leading `+` kept, every other digit replaced.
    private static func phone(_ text: String, _ h: UInt64) -> String {
        guard text.hasPrefix("+"), let separator = text.firstIndex(where: { !$0.isNumber && $0 != "+" }) else {
            return sameLayout(text, h, letters: false)
        }
        return String(text[..<separator]) + sameLayout(String(text[separator...]), h, letters: false)
    }

    /// `first` and `second` with a space between, made in one allocation.
    private static func spaced(_ first: String, _ second: String) -> String {
        let length = first.utf8.count + 1 + second.utf8.count
        return String(unsafeUninitializedCapacity: length) { buffer in
            var end = 0
            for byte in first.utf8 { buffer[end] = byte; end += 1 }
            buffer[end] = UInt8(ascii: " ")
            end += 1
            for byte in second.utf8 { buffer[end] = byte; end += 1 }
            return end
        }
    }

    /// Plain words of exactly `count` characters, the first capitalised (the words are ASCII),
    /// written straight into the string.
    private static func words(count: Int, _ h: UInt64) -> String {
        var stream = Stream(state: h)
        return String(unsafeUninitializedCapacity: count) { buffer in
            var end = 0
            while end < count {
                if end > 0 {
                    buffer[end] = UInt8(ascii: " ")
                    end += 1
                }
                for byte in MaskWords.loremWords[Int(stream.next() % UInt64(MaskWords.loremWords.count))].utf8 where end < count {
                    buffer[end] = byte
                    end += 1
                }
            }
            if buffer[count - 1] == UInt8(ascii: " ") { buffer[count - 1] = UInt8(ascii: "x") }
            if buffer[0] >= UInt8(ascii: "a"), buffer[0] <= UInt8(ascii: "z") { buffer[0] -= 32 }
            return count
        }
    }

    /// A date (or date/time) moved by up to a year either way, in its own format; text that is not
    /// a date becomes a date as far from 2000-01-01.
    private static func shiftedDate(_ text: String, _ h: UInt64) -> String {
        let shift = Int(h % 731) - 365
        guard let days = FormulaCalendar.parseDate(text.prefix(10)) else {
            return FormulaCalendar.formatDate(FormulaCalendar.parseDate("2000-01-01")! + shift)
        }
        return FormulaCalendar.formatDate(days + shift) + text.dropFirst(10)
    }
}
