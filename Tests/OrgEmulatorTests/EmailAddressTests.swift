import Foundation
import Testing

@testable import OrgEmulator

/// An email field's value is checked as `^[^@\s]+@[^@\s]+\.[^@\s]+$` would check it, without
/// compiling the pattern for every record a load writes — but an address that ends in a line
/// break, which the pattern's `$` lets through, is refused.
struct EmailAddressTests {
    static let pattern = #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#

    @Test(arguments: ["wile@acme.example", "a@b.c", "a@b..", "a.b@c.d.e", "é@ü.com", "a@b.c.", "a@@b.c", "@b.c", "a@.c", "a@b.", "a@b",
                      "a b@c.d", "a@b.c ", "a@b\u{A0}.c", "a@b.\u{2028}c", "a\t@b.c", "a@b\u{0B}.c", "a@b\u{85}.c", "", "a@b.c@d.e"])
    func agreesWithThePattern(text: String) {
        #expect(RecordValidator.isEmailAddress(text) == (text.range(of: Self.pattern, options: .regularExpression) != nil), "\(text.debugDescription)")
    }

    /// Every string of up to five scalars from a small alphabet of the cases that matter.
    @Test func agreesWithThePatternOnEveryShortString() {
        let alphabet: [String] = ["a", ".", "@", " ", "\u{A0}", "\u{0B}", "\u{85}"]
        var level = [""]
        var texts = [""]
        for _ in 1...5 {
            level = level.flatMap { text in alphabet.map { text + $0 } }
            texts += level
        }
        var disagreements: [String] = []
        // The pattern's `$` matches before a last line break: those are the one difference.
        for text in texts where !(text.unicodeScalars.last.map { "\u{0B}\u{85}".unicodeScalars.contains($0) } ?? false) && RecordValidator.isEmailAddress(text) != (text.range(of: Self.pattern, options: .regularExpression) != nil) {
            disagreements.append(text.debugDescription)
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test(arguments: ["a@b.c\n", "a@b.c\r", "a@b.c\u{0B}", "a@b.c\u{85}", "a@b.c\u{2028}"])
    func anAddressEndingInALineBreakIsRefused(text: String) {
        #expect(!RecordValidator.isEmailAddress(text))
    }

    @Test func aBadAddressIsRefused() async throws {
        try await withEmulator { emu in
            let reply = try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Mail", "Email": "not an address"])
            #expect(reply.status == 400)
            #expect(reply.json == restError("INVALID_EMAIL_ADDRESS", "Email: invalid email address: not an address", fields: ["Email"]))
            #expect(try await emu.rest("POST", "/sobjects/Contact", json: ["LastName": "Mail", "Email": "mail@example.com"]).status == 201)
        }
    }
}
