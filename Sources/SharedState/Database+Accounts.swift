public import Accounts
import Logging
import PostgresNIO

extension Database {
    /// How long a call of the sessions' or links' store waits for the
    /// database: its pool queues a request while it cannot connect, and a
    /// request is answered with a reason rather than kept waiting.
    static let accountsTimeLimit: Duration = .seconds(5)

    /// Runs `body` with a connection, for the sessions' and links' stores:
    /// their errors are ``AccountsError``s (`.unavailable` when the
    /// database cannot be reached or does not answer within
    /// ``accountsTimeLimit``).
    func forAccounts<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> Result
    ) async throws(AccountsError) -> Result {
        let logger = self.logger
        let outcome: Result?
        do {
            outcome = try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask {
                    try await self.withConnection(doing: what) { connection in try await body(connection, logger) }
                }
                group.addTask {
                    try? await Task.sleep(for: Database.accountsTimeLimit)
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        } catch let error as DatabaseError {
            throw AccountsError(error)
        } catch {
            throw AccountsError(DatabaseError(error, doing: what))
        }
        guard let outcome else {
            throw AccountsError(.unavailable, "the sessions' and links' database does not answer within 5 seconds")
        }
        return outcome
    }
}

extension AccountsError {
    /// A failure of the database that keeps sessions or links:
    /// `.unavailable` when it cannot be reached, else `.io`.
    init(_ error: DatabaseError) {
        let unavailable = error.code == .unavailable || error.code == .closed
        self.init(unavailable ? .unavailable : .io, "the sessions' and links' database: \(error.message)")
    }
}
