@testable import Stages
import JSON
import Testing

/// The masking kinds on their own: the keyed hash against SipHash's reference vectors, and the
/// shape each kind keeps.
@Suite struct ValueMaskerTests {
    /// SipHash-2-4, key 00 01 … 0f, from the reference implementation's vectors.
    @Test func keyedHashIsSipHash24() {
        let hash = KeyedHash(k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908)
        #expect(hash.sipHash([]) == 0x726f_db47_dd0e_0e31)
        #expect(hash.sipHash(Array(0..<15)) == 0xa129_ca61_49be_45e5)
        #expect(hash.sipHash(Array(0..<8)) == 0x93f5_f579_9a93_2462)
        #expect(hash.hash("a", "b") == hash.sipHash([0x61, 0, 0x62]))
        // Words taken across the tag, its zero byte and the value, and a tail.
        let (tag, value) = ("company", "Account 12345 - Town 7, Élan")
        #expect(hash.hash(tag, value) == hash.sipHash(Array(tag.utf8) + [0] + Array(value.utf8)))
    }

    @Test func eachKindKeepsItsShape() {
        let masker = ValueMasker(seed: "seed")
        #expect(masker.mask(.null, as: .firstName) == .null)
        #expect(masker.mask("", as: .email) == "")
        #expect(masker.mask("Ada", as: .null) == .null)
        #expect(masker.mask(12_345, as: .digits).integerValue.map { $0 >= 10_000 && $0 <= 99_999 } == true)
        #expect(masker.mask("0012", as: .digits).stringValue?.count == 4)
        #expect(masker.mask("Ada", as: .firstName) == masker.mask("Ada", as: .firstName))
        #expect(masker.mask("Ada", as: .firstName) != ValueMasker(seed: "other").mask("Ada", as: .firstName)
                || masker.mask("Bob", as: .firstName) != ValueMasker(seed: "other").mask("Bob", as: .firstName))
        let text = masker.mask("A longer note that runs on", as: .text).stringValue ?? ""
        #expect(text.count == 26 && text.first?.isUppercase == true)
        #expect(masker.mask("2024-02-29T10:00:00.000+0000", as: .date).stringValue?.hasSuffix("T10:00:00.000+0000") == true)
        #expect(masker.mask("not a date", as: .date).stringValue?.count == 10)
        #expect(masker.mask("+44 20 7946 0958", as: .phone).stringValue?.hasPrefix("+44 ") == true)
        #expect(masker.mask("k", as: .hash).stringValue?.count == 64)
    }
}
