import Dispatch
public import FileWatching
public import Logging
public import ServiceLifecycle
import Synchronization

/// A folder's open documents, and the observer that tells them what others
/// do: it opens documents, routes each change to the document of its id, and
/// on a graceful shutdown saves and closes them all (run it as a `Service`
/// in a `ServiceGroup`, or call ``closeAll()``).
public final class DocumentWorkspace: Sendable {
    public struct Options: Sendable {
        /// How long a document waits after the last edit before it saves.
        public var autosaveDelay: Duration

        public init(autosaveDelay: Duration = .seconds(2)) {
            self.autosaveDelay = autosaveDelay
        }
    }

    /// The folder, and where replaced content goes.
    public let folder: DocumentFolder
    /// The folder's observer (started by whoever made it).
    public let observer: FileObserver
    public let options: Options
    let logger: Logger
    let now: @Sendable () -> Int64
    private let table = OpenDocuments()
    private let otherLocks = Mutex(OtherLocks())
    private let routing: Task<Void, Never>
    private let routed: AsyncStream<Routed>.Continuation

    /// What the routing task takes in order: the observer's batches, and
    /// ``sync()``'s marks.
    private enum Routed: Sendable {
        case changes([Change])
        case mark(CheckedContinuation<Void, Never>)
    }
    private let token: ObservationToken

    /// - Parameters:
    ///   - folder: The folder the documents are in.
    ///   - observer: An observer of the same folder; the workspace only listens.
    ///   - now: A monotonic clock in nanoseconds (injected by tests; the system's by default).
    public init(
        folder: DocumentFolder, observer: FileObserver, options: Options = Options(), logger: Logger,
        now: (@Sendable () -> Int64)? = nil
    ) {
        self.folder = folder
        self.observer = observer
        self.options = options
        self.logger = logger
        self.now = now ?? { Int64(clamping: DispatchTime.now().uptimeNanoseconds) }
        let (stream, continuation) = AsyncStream<Routed>.makeStream(bufferingPolicy: .unbounded)
        routed = continuation
        token = observer.observe { continuation.yield(.changes($0)) }
        let table = self.table
        let observer = self.observer
        // One task delivers the observer's batches in order.
        routing = Task {
            for await next in stream {
                guard case .changes(let changes) = next else {
                    if case .mark(let waiter) = next { waiter.resume() }
                    continue
                }
                let open = table.all
                guard !open.isEmpty else { continue }
                // Items inside a package that holds no other open document
                // are the package's own (a save brings hundreds): no document
                // claims them, so none is stamped.
                let opaque = await DocumentWorkspace.opaquePackages(open)
                // First, items the documents know by another name: their own
                // saved file under a new id, or a file put at their path.
                for change in changes {
                    guard let id = change.id, table.document(id: id) == nil, let landing = change.landingPath,
                        !opaque.contains(where: { landing != $0 && landing.isSame(asOrUnder: $0) })
                    else { continue }
                    // A batch can be behind the observer: an item that has
                    // left `landing` since (someone's temporary file renamed
                    // onto the path, then replaced by the document's own
                    // save) is not the document's file any more.
                    guard observer.item(at: landing)?.id == id else { continue }
                    let stamp = await runBlocking { folder.stamp(of: landing) }
                    for document in open where await document.claims(landing, stamp: stamp) {
                        table.key(document, by: id)
                        await document.adopt(id)
                    }
                }
                for change in changes {
                    guard let id = change.id, let document = table.document(id: id) else { continue }
                    await document.observed(change)
                }
                await DocumentWorkspace.routeInside(changes, to: open)
            }
        }
    }

    /// The paths of the open packages that hold no other open document.
    private static func opaquePackages(_ open: [Document]) async -> [ItemPath] {
        var packages: [ItemPath] = []
        var all: [ItemPath] = []
        for document in open {
            let path = await document.path
            all.append(path)
            if await document.isPackage { packages.append(path) }
        }
        return packages.filter { package in !all.contains { $0 != package && $0.isSame(asOrUnder: package) } }
    }

    /// Changes of items inside a package (a file written, added, removed,
    /// renamed in it) are changes of the package document: each package
    /// touched judges its tree once per batch.
    private static func routeInside(_ changes: [Change], to open: [Document]) async {
        var packages: [(document: Document, path: ItemPath)] = []
        for document in open where await document.isPackage {
            packages.append((document, await document.path))
        }
        guard !packages.isEmpty else { return }
        // A file being written is judged once it is finished (its
        // `finished` change), as a bytes document's own file is.
        let settled = changes.filter { change in
            switch change {
            case .added(let item), .modified(let item), .duplicated(let item, _): !item.isWriting
            default: true
            }
        }
        var touched: [Document] = []
        for (document, path) in packages
        where settled.contains(where: { $0.touchedPaths.contains { $0 != path && $0.isSame(asOrUnder: path) } }) {
            touched.append(document)
        }
        for document in touched { await document.observedInside() }
    }

    deinit {
        token.cancel()
        routed.finish()
        routing.cancel()
    }

    /// Waits until every change made to the folder before the call has
    /// reached the open documents (their states and presenters have heard of
    /// it). Returns at once when the observer is not running.
    public func sync() async {
        await observer.sync()
        await withCheckedContinuation { waiter in
            if case .terminated = routed.yield(.mark(waiter)) { waiter.resume() }
        }
    }

    /// Opens the document at `path`, reading its content: a file's bytes,
    /// or a folder's whole tree (a package document).
    /// - Throws: ``DocumentsError/Code/tooLarge`` for a folder beyond the
    ///   folder's ``DocumentFolder/packageLimits``.
    public func open(_ path: ItemPath) async throws(DocumentsError) -> Document {
        await observer.sync()
        let folder = self.folder
        let (content, stamp) = try await blocking { () throws(DocumentsError) in try folder.readDocument(path) }
        let id = observer.item(at: path)?.id
        let document = Document(workspace: self, id: id, path: path, content: content, known: stamp)
        register(document, id: id)
        if otherLocks.withLock({ $0.covers(path) }) { await document.lockChanged(heldByOther: true) }
        return document
    }

    /// Makes a new document at `path` with `contents`, saved at once; refused
    /// when something is there already.
    public func create(_ path: ItemPath, contents: [UInt8]) async throws(DocumentsError) -> Document {
        try await create(path, content: .bytes(contents))
    }

    /// Makes a new package document at `path` with `package`, saved at once
    /// (the folder appears whole); refused when something is there already.
    public func create(_ path: ItemPath, package: PackageContents) async throws(DocumentsError) -> Document {
        try await create(path, content: .package(package))
    }

    private func create(_ path: ItemPath, content: DocumentContents) async throws(DocumentsError) -> Document {
        let folder = self.folder
        let (_, stamp) = try await blocking { () throws(DocumentsError) in
            switch content {
            case .bytes(let bytes): try folder.save(bytes, to: path, id: nil, known: nil, creating: true)
            case .package(let package): try folder.savePackage(package, to: path, id: nil, known: nil, creating: true)
            }
        }
        await observer.sync()
        let id = observer.item(at: path)?.id
        let document = Document(workspace: self, id: id, path: path, content: content, known: stamp)
        register(document, id: id)
        return document
    }

    /// The documents open now.
    public var documents: [Document] { table.all }

    /// Saves and closes every open document.
    public func closeAll() async {
        await withTaskGroup(of: Void.self) { group in
            for document in documents { group.addTask { await document.shutDown() } }
        }
    }

    private func register(_ document: Document, id: ItemID?) {
        table.add(document)
        if let id { table.key(document, by: id) }
    }

    /// A closed document is no longer routed to.
    func forget(_ document: Document) { table.remove(document) }

    // MARK: What clients of a server in this process do

    /// Another client took (`held`) or released a lock at `path`, covering
    /// what is under it when `coversBelow` (a WebDAV depth-infinity lock):
    /// the documents it covers are not editable while any lock covers them,
    /// and save their changes once none does. Fed by `ShareServer.activities()`.
    public func lockChanged(at path: ItemPath, coversBelow: Bool, held: Bool) async {
        otherLocks.withLock { $0.change(path, coversBelow: coversBelow, held: held) }
        for document in table.all {
            let documentPath = await document.path
            await document.lockChanged(heldByOther: otherLocks.withLock { $0.covers(documentPath) })
        }
    }

    /// A new version of the file at `path` is arriving (an upload): `offset`
    /// of `length` bytes so far; `offset` `nil` when it ended. The document
    /// open on that file shows ``DocumentState/progressAvailable`` meanwhile.
    /// Fed by `ShareServer.activities()`.
    public func progressChanged(at path: ItemPath, offset: Int64?, length: Int64?) async {
        for document in table.all where await document.path == path {
            await document.progressChanged(offset: offset, length: length)
        }
    }
}

extension Change {
    /// The paths a change is about (both ends of a rename or a move), and
    /// the folder a rescan read again.
    var touchedPaths: [ItemPath] {
        if case .rescanned(let path, _) = self { return [path] }
        return itemPaths
    }

    /// Where the item the change is about is now, for a change that puts an
    /// item at a path.
    var landingPath: ItemPath? {
        switch self {
        case .added(let item), .modified(let item), .duplicated(let item, _): item.path
        case .renamed(_, let to, _, _), .moved(_, let to, _, _): to
        default: nil
        }
    }
}

/// The open documents, and the ids that lead to them.
final class OpenDocuments: Sendable {
    private struct State {
        var all: [ObjectIdentifier: Document] = [:]
        var byID: [ItemID: Document] = [:]
    }
    private let state = Mutex(State())

    var all: [Document] { state.withLock { Array($0.all.values) } }

    func document(id: ItemID) -> Document? { state.withLock { $0.byID[id] } }

    func add(_ document: Document) { state.withLock { $0.all[ObjectIdentifier(document)] = document } }

    /// Changes about `id` go to `document` from now on.
    func key(_ document: Document, by id: ItemID) { state.withLock { $0.byID[id] = document } }

    func remove(_ document: Document) {
        state.withLock { state in
            state.all[ObjectIdentifier(document)] = nil
            state.byID = state.byID.filter { $0.value !== document }
        }
    }
}

extension DocumentWorkspace: Service {
    /// Waits for a graceful shutdown, then saves and closes every document.
    public func run() async throws {
        try? await gracefulShutdown()
        await closeAll()
    }
}
