from clinical_gym.cli import main

raise SystemExit(main())
