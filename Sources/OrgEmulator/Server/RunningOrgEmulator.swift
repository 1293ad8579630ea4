/// An emulator serving in the background: where it is, and how to stop it.
public struct RunningOrgEmulator: Sendable {
    /// `http://127.0.0.1:PORT` (or `https://…` with TLS).
    public let instanceURL: String
    /// The token the emulator accepts from the start.
    public let accessToken: String
    let server: Task<Void, Never>

    /// Stops serving and waits until the port is closed.
    public func stop() async {
        server.cancel()
        await server.value
    }
}

extension OrgEmulator {
    /// Starts serving in the background and returns once the port is bound, or throws why it
    /// could not start (a port in use, a bad TLS key, a faults file that does not read).
    public func start() async throws -> RunningOrgEmulator {
        let (urls, continuation) = AsyncStream.makeStream(of: String.self)
        let failure = StartFailure()
        let server = Task {
            do {
                try await run { url in continuation.yield(url) }
            } catch {
                await failure.record(error)
            }
            continuation.finish()
        }
        guard let url = await urls.first(where: { _ in true }) else {
            // The server ended, or the wait was cancelled: either way it serves no more.
            server.cancel()
            await server.value
            throw await failure.error ?? StartError(description: "the emulator stopped before it was serving")
        }
        return RunningOrgEmulator(instanceURL: url, accessToken: accessToken, server: server)
    }
}

/// The error that ended a server before it reported its URL.
private actor StartFailure {
    var error: (any Error)?

    func record(_ error: any Error) {
        if self.error == nil { self.error = error }
    }
}
