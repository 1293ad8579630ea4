import Crypto
import Foundation

/// SipHash-2-4 under a 128-bit key: a fast keyed hash (a pseudo-random function of the value) for
/// choosing masked values. Without the key, a masked value tells nothing about the original.
struct KeyedHash: Sendable {
    private let k0: UInt64
    private let k1: UInt64

    /// The key derived from a secret seed (SHA-256 of it), so any seed text gives a full key.
    init(seed: String) {
        let digest = Array(SHA256.hash(data: Data(seed.utf8)))
        k0 = digest[0..<8].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        k1 = digest[8..<16].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    /// A hash under the key `k0`, `k1` (SipHash's own test vectors use 0x0706050403020100, 0x0f0e0d0c0b0a0908).
    init(k0: UInt64, k1: UInt64) {
        self.k0 = k0
        self.k1 = k1
    }

    /// The 64-bit hash of `tag`, a zero byte and `value` (the tag keeps kinds of masking apart),
    /// fed from the strings' own bytes: no buffer is made.
    func hash(_ tag: String, _ value: String) -> UInt64 {
        var state = State(k0: k0, k1: k1)
        var tag = tag
        var value = value
        tag.withUTF8 { state.add($0) }
        state.add(0)
        value.withUTF8 { state.add($0) }
        return state.finish()
    }

    /// The SipHash of `bytes`.
    func sipHash(_ bytes: [UInt8]) -> UInt64 {
        var state = State(k0: k0, k1: k1)
        bytes.withUnsafeBufferPointer { state.add($0) }
        return state.finish()
    }

    /// SipHash-2-4 over bytes as they come.
    private struct State {
        var v0, v1, v2, v3: UInt64
        var word: UInt64 = 0
        var count: UInt64 = 0

        init(k0: UInt64, k1: UInt64) {
            v0 = 0x736f6d6570736575 ^ k0
            v1 = 0x646f72616e646f6d ^ k1
            v2 = 0x6c7967656e657261 ^ k0
            v3 = 0x7465646279746573 ^ k1
        }

        mutating func round() {
            v0 &+= v1; v1 = v1.rotatedLeft(13); v1 ^= v0; v0 = v0.rotatedLeft(32)
            v2 &+= v3; v3 = v3.rotatedLeft(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotatedLeft(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotatedLeft(17); v1 ^= v2; v2 = v2.rotatedLeft(32)
        }

        mutating func add(_ byte: UInt8) {
            word |= UInt64(byte) << (8 * (count & 7))
            count &+= 1
            if count & 7 == 0 { compress() }
        }

        /// Adds `bytes`: a word at a time once the pending word is full.
        mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
            var index = 0
            while index < bytes.count && count & 7 != 0 {
                add(bytes[index])
                index += 1
            }
            let raw = UnsafeRawBufferPointer(bytes)
            while bytes.count - index >= 8 {
                word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                count &+= 8
                compress()
                index += 8
            }
            while index < bytes.count {
                add(bytes[index])
                index += 1
            }
        }

        private mutating func compress() {
            v3 ^= word; round(); round(); v0 ^= word
            word = 0
        }

        mutating func finish() -> UInt64 {
            let last = word | ((count & 0xff) << 56)
            v3 ^= last; round(); round(); v0 ^= last
            v2 ^= 0xff
            round(); round(); round(); round()
            return v0 ^ v1 ^ v2 ^ v3
        }
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
