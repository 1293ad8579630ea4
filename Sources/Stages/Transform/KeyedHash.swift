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

    /// The 64-bit hash of `tag` and `value` (the tag keeps kinds of masking apart).
    func hash(_ tag: String, _ value: String) -> UInt64 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(tag.utf8.count + 1 + value.utf8.count)
        bytes.append(contentsOf: tag.utf8)
        bytes.append(0)
        bytes.append(contentsOf: value.utf8)
        return sipHash(bytes)
    }

    func sipHash(_ bytes: [UInt8]) -> UInt64 {
        var v0: UInt64 = 0x736f6d6570736575 ^ k0
        var v1: UInt64 = 0x646f72616e646f6d ^ k1
        var v2: UInt64 = 0x6c7967656e657261 ^ k0
        var v3: UInt64 = 0x7465646279746573 ^ k1
        func round() {
            v0 &+= v1; v1 = v1.rotatedLeft(13); v1 ^= v0; v0 = v0.rotatedLeft(32)
            v2 &+= v3; v3 = v3.rotatedLeft(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotatedLeft(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotatedLeft(17); v1 ^= v2; v2 = v2.rotatedLeft(32)
        }
        let whole = bytes.count / 8 * 8
        var index = 0
        while index < whole {
            var m: UInt64 = 0
            for offset in 0..<8 { m |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
            v3 ^= m; round(); round(); v0 ^= m
            index += 8
        }
        var last = UInt64(bytes.count & 0xff) << 56
        for offset in 0..<(bytes.count - whole) { last |= UInt64(bytes[whole + offset]) << (8 * UInt64(offset)) }
        v3 ^= last; round(); round(); v0 ^= last
        v2 ^= 0xff
        round(); round(); round(); round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
