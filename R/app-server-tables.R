# ---- Tables -------------------------------------------------------------------

app_rule_names <- c("frequency", "nk", "p", "pq", "zero")

server_tables <- function(input, output, session, rv, work) {
  output$tab_message <- app_render_message(rv, "tables")

  output$tab_hierarchy_ui <- shiny::renderUI({
    d <- rv$data
    by <- tryCatch(app_in_columns(input$tab_by, names(d), "Classification variables"),
                   sdcRisk_app_input = function(e) shiny::div(class = "alert alert-danger", conditionMessage(e)))
    if (!is.character(by)) return(by)
    if (!length(by) || is.null(d)) return(NULL)
    lapply(seq_along(by), function(i) {
      shiny::selectizeInput(paste0("tab_hier_", i), sprintf("Coarser levels of %s (columns, finest first; optional)", by[i]),
                            choices = setdiff(names(d), by[i]), multiple = TRUE)
    })
  })

  shiny::observeEvent(input$tab_sens_go, app_guard(rv, "tables", app_sensitivity(input, session, rv, work)))
  shiny::observeEvent(input$tab_protect_go, app_guard(rv, "tables", app_protect(input, session, rv, work)))
  server_tables_outputs(output, rv)
}

server_tables_outputs <- function(output, rv) {
  output$tab_words <- shiny::renderUI({
    s <- rv$sens
    if (is.null(s)) return(app_help("Choose the table and rules, then press Find sensitive cells."))
    p <- rv$prot
    shiny::div(class = "sdc-words", id = "tab_words_text",
      shiny::p(sprintf("%s cells (with all margins), %s of them sensitive.", format(nrow(s), big.mark = ","), sum(s$sensitive))),
      if (!is.null(p)) shiny::p(sprintf("Protected: %s primary and %s secondary suppressions.", sum(p$status == "primary"), sum(p$status == "secondary")))
    )
  })
  output$tab_sens_summary <- shiny::renderPrint(if (!is.null(rv$sens)) print(summary(rv$sens)))
  output$tab_sens_table <- shiny::renderTable({
    s <- rv$sens
    if (is.null(s)) return(NULL)
    s <- as.data.frame(unclass(s))[s$sensitive, , drop = FALSE]
    s[, intersect(c(attr(rv$sens, "by") %||% names(s)[1], "level", "n_contributors", "total", "x1", "x2", "rules"), names(s)), drop = FALSE]
  }, striped = TRUE, spacing = "xs")
  output$tab_plot <- shiny::renderPlot({
    if (!is.null(rv$prot)) graphics::plot(rv$prot) else if (!is.null(rv$sens)) graphics::plot(rv$sens)
  })
  output$tab_audit_words <- shiny::renderUI({
    a <- rv$audit
    if (is.null(a)) return(app_help("Protect the table to see its audit."))
    shiny::div(class = "sdc-words", id = "audit_words_text",
      shiny::p(if (isTRUE(attr(a, "passed"))) "Audit passed: every sensitive cell keeps at least its protection level on each side, whatever an attacker deduces from the published cells and the table's sums." else "Audit FAILED: some sensitive cells are not protected."),
      shiny::p(sprintf("%s linear programs solved.", attr(a, "n_lp") %||% NA))
    )
  })
  output$tab_audit_table <- shiny::renderTable(as.data.frame(unclass(rv$audit)), striped = TRUE, spacing = "xs")
}

app_sensitivity <- function(input, session, rv, work) {
  d <- rv$data
  if (is.null(d)) return(app_fail(rv, "tables", "Load the records on the Data page first."))
  step <- app_sensitivity_step(input, d)
  rv$sens <- NULL
  rv$prot <- NULL
  rv$protect_code <- NULL
  ok <- FALSE
  shiny::withProgress(message = "Finding sensitive cells", value = 0.3, {
    ok <- app_run(list(step), work, rv, "tables")
  })
  if (!ok) return()
  rv$sens <- work$sens
  rv$tables_code <- list(step)
  shiny::updateTabsetPanel(session, "tab_tabs", selected = "Sensitive cells")
}

app_protect <- function(input, session, rv, work) {
  if (is.null(rv$sens)) return(app_fail(rv, "tables", "Find the sensitive cells first."))
  steps <- list(
    app_assign("prot", app_call(quote(sdcRisk::protect_table), .first = list(quote(sens)),
                                cost = app_in_choice(input$tab_cost, c("value", "cells"), "The suppression cost"),
                                method = app_in_choice(input$tab_method, c("heuristic", "optimal"), "The method"))),
    quote(audit <- sdcRisk::audit_table(sens, prot$status != "published"))
  )
  ok <- FALSE
  shiny::withProgress(message = "Protecting the table", value = 0.2, detail = "secondary suppression and its LP audit", {
    ok <- app_run(steps, work, rv, "tables")
  })
  if (!ok) return()
  rv$prot <- work$prot
  rv$audit <- work$audit
  rv$protect_code <- steps
  shiny::updateTabsetPanel(session, "tab_tabs", selected = "Pattern")
}

# sens <- cell_sensitivity(data, ...) from the inputs, each checked.
app_sensitivity_step <- function(input, d) {
  cols <- names(d)
  num <- cols[vapply(d, is.numeric, logical(1))]
  by <- app_in_columns(input$tab_by, cols, "Classification variables")
  if (!length(by)) app_reject("Choose the classification variables.")
  value <- app_in_column(input$tab_value, num, "The value variable (a numeric column)")
  if (!nzchar(value)) app_reject("Choose the value variable (a numeric column).")
  rules <- app_rules_calls(input)
  if (!length(rules)) app_reject("Choose at least one rule.")
  contributor <- app_in_column(input$tab_contributor, cols, "The contributor id")
  weight <- app_in_column(input$tab_weight, num, "The sampling weight")
  hier <- list()
  for (i in seq_along(by)) {
    levels <- app_in_columns(input[[paste0("tab_hier_", i)]], setdiff(cols, by[i]), sprintf("The coarser levels of %s", by[i]))
    if (length(levels)) {
      problem <- app_check_hierarchy(d, by[i], levels)
      if (!is.null(problem)) app_reject(problem)
      hier[[length(hier) + 1L]] <- call("unique", call("[", quote(data), app_lang(c(by[i], levels))))
      names(hier)[length(hier)] <- by[i]
    }
  }
  app_assign("sens", app_call(quote(sdcRisk::cell_sensitivity), .first = list(quote(data)),
    by = by, value = value, rules = app_named_call("list", rules),
    contributor = if (nzchar(contributor)) contributor,
    weight = if (nzchar(weight)) weight,
    hierarchy = if (length(hier)) app_named_call("list", unname(hier), names(hier))
  ))
}

app_rules_calls <- function(input) {
  r <- input$tab_rules
  if (!is.null(r) && (!is.character(r) || !is.null(attributes(r)) || !all(r %in% app_rule_names))) {
    app_reject(sprintf("The rules must be among the rules on the page; the page sent %s.", app_show(r)))
  }
  num <- function(id, what) app_in_number(input[[id]], what)
  Filter(Negate(is.null), list(
    if ("frequency" %in% r) app_call(quote(sdcRisk::rule_frequency), num("tab_freq_n", "The n of the frequency rule")),
    if ("nk" %in% r) app_call(quote(sdcRisk::rule_nk), num("tab_nk_n", "The n of the dominance rule"), num("tab_nk_k", "The k of the dominance rule")),
    if ("p" %in% r) app_call(quote(sdcRisk::rule_p), num("tab_p", "The p of the p% rule")),
    if ("pq" %in% r) app_call(quote(sdcRisk::rule_pq), num("tab_pq_p", "The p of the pq rule"), num("tab_pq_q", "The q of the pq rule")),
    if ("zero" %in% r) quote(sdcRisk::rule_zero())
  ))
}

# A hierarchy must nest: each code in exactly one group at every coarser
# level, or the table's cells would not add up to its margins.
app_check_hierarchy <- function(d, var, cols) {
  levels <- c(var, cols)
  for (j in seq_along(cols)) {
    finer <- levels[j]
    m <- unique(d[c(finer, cols[j])])
    dup <- m[[finer]][duplicated(m[[finer]])]
    if (length(dup)) {
      parents <- unique(as.character(m[[cols[j]]][m[[finer]] == dup[1]]))
      return(sprintf("The table would not be additive: %s = %s falls under %s groups of %s (%s). Each code must belong to exactly one group at every coarser level.",
                     finer, dup[1], length(parents), cols[j], paste(parents, collapse = ", ")))
    }
  }
  NULL
}
