import JSON

/// The admin API in process, for a program or test that embeds the emulator: the same as
/// `/emulator/*` over HTTP (docs/emulator.md), without a request.
extension OrgEmulator {
    /// Why an admin call was refused (faults that do not parse, a reset that failed).
    public struct AdminError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Seconds the org's clock runs ahead of the system clock.
    public var clockOffsetSeconds: Int64 { engine.clock.offsetSeconds }

    /// Moves the org's clock forward, as `POST /emulator/clock`: record dates, the `Date` header,
    /// request deadlines and injected latency all follow it.
    public func advanceClock(bySeconds seconds: Int64) {
        engine.clock.advance(bySeconds: max(0, seconds))
    }

    /// Sets the faults, as `POST /emulator/faults` (`[:]` clears them); held requests are released.
    public func setFaults(_ faults: JSONObject) async throws(AdminError) {
        do {
            await engine.setFaults(try FaultSettings(json: faults))
        } catch {
            throw AdminError(description: "faults: \(error.message)")
        }
    }

    /// The counters of `GET /emulator/stats`.
    public func stats() async -> JSONValue {
        await engine.statsBody()
    }

    /// Back to the seed, as `POST /emulator/reset`.
    public func reset() async throws(AdminError) {
        do {
            try await engine.reset()
        } catch {
            throw AdminError(description: "reset: \(error)")
        }
    }

    /// Returns once no request under `/services` is being handled — after the clock was advanced,
    /// say, so that held requests have finished. A request a stall holds ends only when the
    /// faults change.
    public func waitUntilIdle() async {
        await engine.waitUntilIdle()
    }
}
