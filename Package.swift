// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// Linux only for now (inotify, statx, openat2): no Apple platform is
// declared until the Darwin backends exist.
let package = Package(
    name: "fileshare",
    products: [
        .library(name: "FileWatching", targets: ["FileWatching"]),
        .library(name: "FileSharing", targets: ["FileSharing"]),
        .library(name: "ZipStream", targets: ["ZipStream"]),
        .library(name: "DocumentTypes", targets: ["DocumentTypes"]),
        .library(name: "Inbox", targets: ["Inbox"]),
        .library(name: "ChangeLog", targets: ["ChangeLog"]),
        .library(name: "Accounts", targets: ["Accounts"]),
        .library(name: "Previews", targets: ["Previews"]),
        .library(name: "Documents", targets: ["Documents"]),
        .library(name: "Versions", targets: ["Versions"]),
        .library(name: "SharedState", targets: ["SharedState"]),
        .executable(name: "fileshare", targets: ["fileshare"]),
    ],
    // What a library user builds: the observer (FileWatching), the change
    // log, versions, the Documents library and ZipStream need only
    // swift-log, swift-service-lifecycle and swift-collections, with no
    // trait (`.package(url: …, from: …, traits: [])`); DocumentTypes and the
    // Inbox add the trait DocumentTypes (Yams, TOMLKit); Previews the trait
    // Previews (swift-subprocess, swift-system); the server's modules
    // (FileSharing, SharedState, Accounts, the fileshare command) the trait
    // Server (Hummingbird, SwiftNIO, PostgreSQL, Prometheus, …), which
    // enables the other two. A package's dependency whose every use is behind
    // a trait that is off is not even resolved. All three are on by default.
    traits: [
        .default(enabledTraits: ["Server"]),
        .trait(
            name: "Server", description: "fileshare serve and its modules",
            enabledTraits: ["DocumentTypes", "Previews"]),
        .trait(name: "DocumentTypes", description: "document types by content, and the Inbox"),
        .trait(name: "Previews", description: "thumbnails of images, comics, PDFs and videos"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(
            url: "https://github.com/apple/swift-configuration",
            from: "1.4.0",
            traits: [.defaults, "YAML", "Reloading"]
        ),
    ],
    targets: [
        .target(name: "CFileshareShim"),
        .target(
            name: "FileWatching",
            dependencies: [
                "CFileshareShim",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "ZipStream", swiftSettings: swiftSettings),
        .target(
            name: "ChangeLog",
            dependencies: [
                "FileWatching", "ZipStream",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        // The cluster: what several servers of one folder share, in
        // PostgreSQL. It implements the stores the server's library declares
        // (the change log, sessions, share links, WebDAV locks, resumable
        // uploads), so it depends on FileSharing, never the other way round:
        // only the fileshare command imports both, and wires the database.
        .target(
            name: "SharedState",
            dependencies: [
                "ChangeLog", "FileWatching", "Accounts", "FileSharing",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Previews",
            dependencies: [
                "FileWatching",
                "CFileshareShim",
                "CJPEGThumbnail",
                "CImageThumbnail",
                .product(name: "Subprocess", package: "swift-subprocess", condition: .when(traits: ["Previews"])),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(traits: ["Previews"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Documents",
            dependencies: [
                "FileWatching", "CFileshareShim", "Versions", "ChangeLog",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Versions",
            dependencies: [
                "CFileshareShim", "FileWatching", "ChangeLog",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Accounts",
            dependencies: [
                "FileWatching", "ConfigText",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The positioned reader of configuration text (JSON, with the place
        // of every value), shared by the document types and the users file.
        .target(name: "ConfigText", swiftSettings: swiftSettings),
        .target(
            name: "DocumentTypes",
            dependencies: [
                "ConfigText",
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["DocumentTypes"])),
                .product(name: "TOMLKit", package: "TOMLKit", condition: .when(traits: ["DocumentTypes"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Inbox",
            dependencies: [
                "CFileshareShim", "FileWatching", "DocumentTypes",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // libturbojpeg is loaded at run time (dlopen): building needs no JPEG
        // header or library. glibc before 2.34 keeps dlopen in libdl.
        .target(name: "CJPEGThumbnail", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // libpng16, libwebp, giflib, libheif and zlib, the same way: loaded
        // at run time, so building needs none of their headers or libraries.
        .target(name: "CImageThumbnail", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // The server (its core and its faces): no database. What several
        // servers share is behind its store protocols, given by the caller.
        .target(
            name: "FileSharing",
            dependencies: [
                "FileWatching",
                "Accounts",
                "ChangeLog",
                "ZipStream",
                "DocumentTypes",
                "CFileshareShim",
                "Previews",
                "Versions",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The page and the OpenAPI document, compiled into the binary as
            // byte arrays: nothing to find beside it at run time.
            resources: [
                .embedInCode("Resources/index.html"),
                .embedInCode("Resources/app.css"),
                .embedInCode("Resources/app.js"),
                .embedInCode("Resources/gallery.js"),
                .embedInCode("Resources/viewer.js"),
                .embedInCode("Resources/gallery.css"),
                .embedInCode("Resources/openapi.json"),
                .embedInCode("Resources/signin.html"),
                .embedInCode("Resources/shares.js"),
                .embedInCode("Resources/link.html"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fileshare",
            dependencies: [
                "CFileshareShim",
                "FileWatching",
                "ChangeLog",
                "FileSharing",
                "DocumentTypes",
                "Inbox",
                "Accounts",
                "SharedState",
                "Previews",
                "Versions",
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Server"])),
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["Server"])),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(traits: ["Server"])),
                .product(
                    name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FileshareTestSupport",
            path: "Tests/FileshareTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FileWatchingTests",
            dependencies: [
                "FileWatching", "CFileshareShim", "FileshareTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChangeLogTests",
            dependencies: [
                "ChangeLog", "SharedState", "FileWatching", "FileshareTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SharedStateTests",
            dependencies: [
                "SharedState", "ChangeLog", "Accounts", "FileshareTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PreviewsTests",
            dependencies: ["Previews", "CImageThumbnail", "CJPEGThumbnail", "FileWatching", "FileshareTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VersionsTests",
            dependencies: [
                "Versions", "FileWatching", "ChangeLog", "FileshareTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AccountsTests",
            dependencies: ["Accounts", "FileshareTestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ZipStreamTests",
            dependencies: ["ZipStream", "FileshareTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "InboxTests",
            dependencies: [
                "Inbox", "DocumentTypes", "FileshareTestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DocumentTypesTests",
            dependencies: ["DocumentTypes", "ConfigText", "ZipStream", "FileshareTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FileSharingTests",
            dependencies: [
                "FileSharing", "FileWatching", "DocumentTypes", "Previews", "Versions", "Accounts", "Documents",
                "SharedState", "FileshareTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(
                    name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DocumentsTests",
            dependencies: ["Documents", "FileWatching", "Versions", "FileshareTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FileshareCLITests",
            dependencies: [
                "fileshare", "Accounts", "Documents", "Versions", "FileWatching", "FileshareTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
