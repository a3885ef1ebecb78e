from flagtrace.cli import main

raise SystemExit(main())
