from smalltown.cli.main import main

raise SystemExit(main())
