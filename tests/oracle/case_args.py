"""The report options the oracle scripts' golden cases share (check_filters.py,
check_select.py): one argument of a case's args file, read into the dict o."""


def table_option(a, it, o, path_key):
    """Reads a (and its value from it) into o: --sort, -n, --max-name-width 0,
    --no-cache, or the input path (as o[path_key]). Exits on another option;
    the caller tests its own options first."""
    if a in ("--sort", "-s"):
        o["sort"] = next(it)
    elif a in ("-n", "--row-limit"):
        o["limit"] = int(next(it))
    elif a == "--max-name-width":
        if next(it) != "0":
            raise SystemExit("the cases use --max-name-width 0 (whole names)")
    elif a == "--no-cache":
        pass
    elif a.startswith("-"):
        raise SystemExit("unexpected option %s" % a)
    else:
        o[path_key] = a
