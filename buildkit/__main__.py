from buildkit.frontends.cli.entry import main

raise SystemExit(main())
