from buildkit.frontends.cli.main import main

raise SystemExit(main())
