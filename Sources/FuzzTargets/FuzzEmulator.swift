import Foundation
import OrgEmulator
#if canImport(Glibc)
import Glibc
#endif

/// A running emulator that fuzz inputs are sent to as HTTP requests. An input's first line is
/// `METHOD TARGET` (`POST /services/data/v62.0/composite`), the rest its body; the request is
/// sent with the emulator's token, a JSON content type and its length, over a fresh connection.
/// The emulator must answer every one with an HTTP status within the time limit.
public final class FuzzEmulator: Sendable {
    public let running: RunningOrgEmulator
    let port: UInt16

    /// - Parameter requestDeadlineSeconds: the org's deadline for a request, past which it answers
    ///   500 REQUEST_RUNNING_TOO_LONG — short when fuzzing, so that a slow input is a finding; long
    ///   when replaying a corpus on a loaded machine, where time says nothing about the input.
    public init(seedPath: String, requestDeadlineSeconds: Double = 5) async throws {
        let emulator = try OrgEmulator(configuration: .init(host: "127.0.0.1", port: 0, seedPath: seedPath,
                                                            requestDeadlineSeconds: requestDeadlineSeconds))
        running = try await emulator.start()
        port = UInt16(URLComponents(string: running.instanceURL)?.port ?? 0)
    }

    /// Sends one input and returns the answer's status code; `nil` when the emulator closed the
    /// connection without answering or did not answer within `seconds`.
    @discardableResult
    public func send(_ input: Data, seconds: Int = 10) -> Int? {
        let (method, target, body) = Self.request(from: input)
        var request = Data("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(running.accessToken)\r\n".utf8)
        request += Data("Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8)
        request += body
        return exchange(request, seconds: seconds)
    }

    /// The method, request target and body an input stands for.
    static func request(from input: Data) -> (method: String, target: String, body: Data) {
        let text = String(decoding: input, as: UTF8.self)
        let firstLine = text.prefix { $0 != "\n" }
        let parts = firstLine.split(separator: " ", maxSplits: 1)
        let method = parts.first.map { String($0.filter { $0.isLetter && $0.isASCII }.prefix(10)) }.flatMap { $0.isEmpty ? nil : $0 } ?? "GET"
        var target = parts.count > 1 ? String(parts[1]) : "/services/data/v62.0/"
        target = String(target.unicodeScalars.filter { $0.value > 32 && $0.value < 127 }.map(Character.init))
        if !target.hasPrefix("/") { target = "/" + target }
        // Faults (stalls, latency) and resets would make the emulator slow on purpose: not fuzzed.
        if target.lowercased().hasPrefix("/emulator") { target = "/services" + target }
        let body = Data(input.dropFirst(min(input.count, firstLine.utf8.count + 1)))
        return (method, target, body)
    }

    private func exchange(_ request: Data, seconds: Int) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let sent = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { return nil }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        // "HTTP/1.1 200 OK"
        let statusLine = String(decoding: answer.prefix(32), as: UTF8.self)
        guard statusLine.hasPrefix("HTTP/1.1 "), let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        return status
    }

    /// Whether an answer is one an org could give: anything under 500, a 503 (busy), or the
    /// SOAP API's faults, which an org sends as 500.
    public static func isAcceptable(_ status: Int, for input: Data) -> Bool {
        // SOAP faults are HTTP 500, as in an org; the emulator reads `//services/Soap` as `/services/Soap`.
        let path = request(from: input).target.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        return status < 500 || status == 503 || path.hasPrefix("services/Soap/")
    }

    public func stop() async {
        await running.stop()
    }
}
