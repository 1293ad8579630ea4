import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether a URL's host is this machine: an IPv4 address in 127.0.0.0/8, the IPv6 `::1`, or
/// `localhost`. Decided on the parsed address, never on a prefix, so `127.attacker.example` or
/// `127.0.0.1.nip.io` are not loopback (they resolve through DNS to anywhere).
public enum LoopbackHost {
    public static func contains(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "localhost." { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }
}
