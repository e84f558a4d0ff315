from ragctl.app.quick import main

main()
